# lever cc: arguments, programs (gcc/clang, C/C++/threads) with and without
# stack pads, link-order randomization; and lever-cc in make and CMake.
lever_e2e_test(stabilizer_cc ${CMAKE_SOURCE_DIR}/tests/e2e/stabilizer_cc.sh TIMEOUT 600)
lever_e2e_test(stabilizer_cc_build ${CMAKE_SOURCE_DIR}/tests/e2e/stabilizer_cc_build.sh TIMEOUT 300)
