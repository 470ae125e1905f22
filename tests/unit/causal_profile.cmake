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
# The fitted curve that can level off, the default ranking (Figure 1: line a
# first) and thin evidence, on synthetic profiles with known true curves.
lever_unit_test(test_causal_fit
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_fit.c
  LIBS lever_causal lever_base PkgConfig::JANSSON m)
# Coz's viewer's method (--method=coz-viewer) on a profile worked out by hand.
lever_unit_test(test_causal_viewer
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_viewer.c
  LIBS lever_causal lever_base PkgConfig::JANSSON m)
