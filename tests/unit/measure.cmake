# The measure room (src/measure): the options shared by lever bench and
# compare (--randomize parts, --rerandomize, combinations that would do
# nothing) and the suite analysis of lever compare --suite against R.
lever_unit_test(test_measure_options
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_measure_options.c
          ${CMAKE_SOURCE_DIR}/src/cli/run_options.c ${CMAKE_SOURCE_DIR}/src/cli/options.c
          ${CMAKE_SOURCE_DIR}/src/cli/data_files.c
  LIBS lever_measure lever_causal lever_base)
lever_unit_test(test_measure_suite
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_measure_suite.c
  LIBS lever_measure lever_base)
