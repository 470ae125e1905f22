# bench/results: every table whose raw data is committed is rebuilt from it
# and must equal the committed table (bench/results/regenerate.sh --check).
add_test(NAME bench_results COMMAND bash ${CMAKE_SOURCE_DIR}/bench/results/regenerate.sh --check
  ${CMAKE_BINARY_DIR})
set_tests_properties(bench_results PROPERTIES LABELS "e2e" TIMEOUT 300)
