# src/cli/options.c: the declarative option tables of the commands (typed
# values, usage errors, the separator, generated --help).
lever_unit_test(test_cli_options
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_cli_options.c ${CMAKE_SOURCE_DIR}/src/cli/options.c
  LIBS lever_base)
