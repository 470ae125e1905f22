# lever causal report --method=coz-viewer against an independent computation.
lever_e2e_test(cli_causal_report_viewer ${CMAKE_SOURCE_DIR}/tests/e2e/cli_causal_report_viewer.sh)
