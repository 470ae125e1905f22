# The statistics module (src/stats): every routine against reference values
# from SciPy (test_stats), the sample and suite file readers with a fuzz loop
# (test_stats_samples), and the reproduction of the Stabilizer paper's
# Table 1 and ANOVA from the authors' raw data (test_stats_asplos13).
lever_unit_test(test_stats_asplos13
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stats_asplos13.c
          ${CMAKE_SOURCE_DIR}/tests/unit/test_stats_asplos13_data.c
  LIBS lever_stats lever_base m)
lever_unit_test(test_stats
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stats.c
  LIBS lever_stats lever_base m)
lever_unit_test(test_stats_samples
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stats_samples.c
  LIBS lever_stats lever_base m)
# The two-sample decision (src/stats/compare.c) against SciPy values
# printed by bench/stats/compare_reference.py.
lever_unit_test(test_stats_compare
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stats_compare.c
  LIBS lever_stats lever_base m)
