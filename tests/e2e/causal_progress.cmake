lever_e2e_test(causal_progress ${CMAKE_SOURCE_DIR}/tests/e2e/causal_progress.sh TIMEOUT 120)
