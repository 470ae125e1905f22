# lever causal report --json/--html/table on a recorded load-amplified sweep
# (analysis code only: also runs in the ASan+UBSan build).
lever_e2e_test(cli_causal_report_amp ${CMAKE_SOURCE_DIR}/tests/e2e/cli_causal_report_amp.sh)
