# The metric counters of liblever-annotate.so (src/annotate/runtime/metrics.c)
# and the interposers that feed mem, wait and hold (interpose_*.c), built from
# their sources into the tests (RUNTIME label: the sanitizer pass runs them).
# The interposers stand in front of the C library's malloc, which
# AddressSanitizer also wants to own: NO_ASAN for that test.
lever_unit_test(test_annotate_metrics
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_metrics.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/metrics.c
  RUNTIME)
lever_unit_test(test_annotate_interpose
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_interpose.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/metrics.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_real.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_malloc.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_new.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_locks.c
  LIBS stdc++ Threads::Threads ${CMAKE_DL_LIBS}
  RUNTIME NO_ASAN)
# -fno-builtin: the compiler would otherwise drop a malloc whose block is only freed.
target_compile_options(test_annotate_interpose PRIVATE -fno-builtin)
