# lever annotate dump on a synthetic record: CSV and JSON against the record
# (analysis code only: the "cli_" prefix puts it in the ASan+UBSan pass).
lever_e2e_test(cli_annotate_dump ${CMAKE_SOURCE_DIR}/tests/e2e/cli_annotate_dump.sh TIMEOUT 120)
