# lever annotate end to end on synthetic records (analysis code only, so the
# "cli_" prefix puts it in the ASan+UBSan pass too).
lever_e2e_test(cli_annotate ${CMAKE_SOURCE_DIR}/tests/e2e/cli_annotate.sh TIMEOUT 300)
