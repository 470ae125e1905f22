lever_e2e_test(annotate_probe_exits ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_probe_exits.sh TIMEOUT 240)
