lever_e2e_test(causal_known ${CMAKE_SOURCE_DIR}/tests/e2e/causal_known.sh RUN_SERIAL TRUE TIMEOUT 420)
