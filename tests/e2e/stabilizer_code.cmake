lever_e2e_test(stabilizer_code ${CMAKE_SOURCE_DIR}/tests/e2e/stabilizer_code.sh TIMEOUT 300)
