# The causal runtime on programs that fork, exec, use SIGPROF and SIGSEGV
# themselves, create 1000 threads, exit from a thread, are C++, were written
# for Coz, or use every blocking primitive (tests/programs/causal/), and the
# delay accounting around blocking calls.
# The suite's time grows with the machine's load (its work is fixed): 271 s
# and 341 s at load averages 17-18 on a 2-vCPU VM, against 400 s before; 600 s
# leaves 1.75x. Hangs are caught per program run (timeout 60; the slowest,
# threads1000 under lever, takes ~6 s at load 14).
lever_e2e_test(causal_robustness ${CMAKE_SOURCE_DIR}/tests/e2e/causal_robustness.sh TIMEOUT 600)
lever_e2e_test(causal_sync_accounting ${CMAKE_SOURCE_DIR}/tests/e2e/causal_sync_accounting.sh
  RUN_SERIAL TRUE TIMEOUT 180)
