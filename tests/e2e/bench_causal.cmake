# bench/causal harness: --quick mode end to end on two bench programs (builds
# them, runs lever and Coz, writes the tables). Behaviour only, no timings.
lever_e2e_test(bench_causal_smoke ${CMAKE_SOURCE_DIR}/tests/e2e/bench_causal_smoke.sh RUN_SERIAL TRUE TIMEOUT 600)
