# lever layout merge, report --html, export --pprof on hand-written
# version-2 records (analysis code only: also runs in the ASan+UBSan build).
lever_e2e_test(cli_layout_outputs ${CMAKE_SOURCE_DIR}/tests/e2e/cli_layout_outputs.sh)
