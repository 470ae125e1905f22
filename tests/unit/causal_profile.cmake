# The causal profile reader, summary and text report (src/causal), including
# Coz's sample profiles and a fuzz loop.
lever_unit_test(test_causal_profile
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_profile.c
  LIBS lever_causal lever_base m)
# The full report: aggregation, phase correction, Little's law, bootstrap,
# ranking, contention, the JSON Lines reader (with a fuzz loop), JSON and HTML.
lever_unit_test(test_causal_report
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_report.c
  LIBS lever_causal lever_base PkgConfig::JANSSON m)
