# The causal runtime on programs that fork, exec, use SIGPROF and SIGSEGV
# themselves, create 1000 threads, exit from a thread, are C++, were written
# for Coz, or use every blocking primitive (tests/programs/causal/), and the
# delay accounting around blocking calls.
lever_e2e_test(causal_robustness ${CMAKE_SOURCE_DIR}/tests/e2e/causal_robustness.sh TIMEOUT 400)
lever_e2e_test(causal_sync_accounting ${CMAKE_SOURCE_DIR}/tests/e2e/causal_sync_accounting.sh
  RUN_SERIAL TRUE TIMEOUT 180)
