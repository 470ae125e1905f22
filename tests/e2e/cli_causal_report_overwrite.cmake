# lever causal report --html never writes over its inputs or other data files.
lever_e2e_test(cli_causal_report_overwrite ${CMAKE_SOURCE_DIR}/tests/e2e/cli_causal_report_overwrite.sh)
