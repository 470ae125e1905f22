# The lever command line: help and usage errors, the causal launcher, the
# report on Coz's sample profiles, the public headers, and the demo script.
lever_e2e_test(cli_help ${CMAKE_SOURCE_DIR}/tests/e2e/cli_help.sh)
lever_e2e_test(cli_launch ${CMAKE_SOURCE_DIR}/tests/e2e/cli_launch.sh)
lever_e2e_test(cli_report ${CMAKE_SOURCE_DIR}/tests/e2e/cli_report.sh)
lever_e2e_test(cli_headers ${CMAKE_SOURCE_DIR}/tests/e2e/cli_headers.sh TIMEOUT 300)
lever_e2e_test(cli_demo ${CMAKE_SOURCE_DIR}/tests/e2e/cli_demo.sh RUN_SERIAL TRUE TIMEOUT 300)
lever_e2e_test(cli_causal_report ${CMAKE_SOURCE_DIR}/tests/e2e/cli_causal_report.sh)
