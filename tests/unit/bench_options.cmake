# lever bench / lever compare options shared by both (src/cli/bench_options.c):
# --randomize parts, --rerandomize, and combinations that would do nothing.
lever_unit_test(test_bench_options
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_bench_options.c
          ${CMAKE_SOURCE_DIR}/src/cli/bench_options.c
  LIBS lever_base)
