# report_output_check: report files never replace inputs or data files.
lever_unit_test(test_report_output_check
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_report_output_check.c
  LIBS lever_report lever_base)
