# Latency points (LEVER_BEGIN/LEVER_END) against a program whose requests in
# flight and latency are known by construction.
lever_e2e_test(causal_latency ${CMAKE_SOURCE_DIR}/tests/e2e/causal_latency.sh TIMEOUT 120)
