# bench/stabilizer/run.sh (Stabilizer's Table 1, overhead and -O2/-O3 suite)
# in a quick mode on two stand-in programs built with lever cc: the harness
# runs and writes its report; never timings.
lever_e2e_test(stabilizer_bench ${CMAKE_SOURCE_DIR}/tests/e2e/stabilizer_bench.sh TIMEOUT 300)
