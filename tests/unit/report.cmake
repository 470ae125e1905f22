# The output helpers (src/report): formatting, tables, JSON (checked with
# jansson), HTML and SVG charts.
lever_unit_test(test_report
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_report.c
  LIBS lever_report lever_stats lever_base PkgConfig::JANSSON m)
