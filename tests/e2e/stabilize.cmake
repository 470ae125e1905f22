# lever stabilize and the Stabilizer runtime's heap: the launcher (options,
# environment, errors), the randomness of heap addresses (NIST tests, with
# glibc's malloc as the control that must fail), the allocation API under
# the shuffling heap, freed memory given back, and real programs giving the same output as bare runs.
lever_e2e_test(stabilize_cli ${CMAKE_SOURCE_DIR}/tests/e2e/stabilize_cli.sh TIMEOUT 120)
lever_e2e_test(stabilize_heap_random ${CMAKE_SOURCE_DIR}/tests/e2e/stabilize_heap_random.sh
  TIMEOUT 600)
lever_e2e_test(stabilize_heap_memory ${CMAKE_SOURCE_DIR}/tests/e2e/stabilize_heap_memory.sh
  TIMEOUT 600)
lever_e2e_test(stabilize_heap_api ${CMAKE_SOURCE_DIR}/tests/e2e/stabilize_heap_api.sh TIMEOUT 600)
# Two threads' objects share no cache line (no false sharing between threads).
lever_e2e_test(stabilize_heap_threads ${CMAKE_SOURCE_DIR}/tests/e2e/stabilize_heap_threads.sh
  TIMEOUT 120)
lever_e2e_test(stabilize_programs ${CMAKE_SOURCE_DIR}/tests/e2e/stabilize_programs.sh
  TIMEOUT 600)
# The same NIST tests on the addresses of code copies (needs the code part).
lever_e2e_test(stabilize_code_random ${CMAKE_SOURCE_DIR}/tests/e2e/stabilize_code_random.sh
  TIMEOUT 600)
