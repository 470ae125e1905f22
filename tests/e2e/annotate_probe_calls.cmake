lever_e2e_test(annotate_probe_calls ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_probe_calls.sh TIMEOUT 120)
