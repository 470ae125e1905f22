# NIST SP 800-22 randomness tests (src/stats/nist.c) against the worked
# examples of the NIST document.
lever_unit_test(test_stats_nist
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stats_nist.c
  LIBS lever_stats lever_base m)
