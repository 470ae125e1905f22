# lever layout report on a hand-written record: text, JSON, options, errors
# (analysis code only: also runs in the ASan+UBSan build).
lever_e2e_test(cli_layout ${CMAKE_SOURCE_DIR}/tests/e2e/cli_layout.sh)
