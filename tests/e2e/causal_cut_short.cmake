lever_e2e_test(causal_cut_short ${CMAKE_SOURCE_DIR}/tests/e2e/causal_cut_short.sh TIMEOUT 120)
