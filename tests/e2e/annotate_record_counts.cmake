lever_e2e_test(annotate_record_counts ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_record_counts.sh TIMEOUT 120)
