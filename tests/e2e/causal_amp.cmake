lever_e2e_test(causal_amp ${CMAKE_SOURCE_DIR}/tests/e2e/causal_amp.sh RUN_SERIAL TRUE TIMEOUT 300)
