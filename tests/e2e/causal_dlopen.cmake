lever_e2e_test(causal_dlopen ${CMAKE_SOURCE_DIR}/tests/e2e/causal_dlopen.sh TIMEOUT 120)
