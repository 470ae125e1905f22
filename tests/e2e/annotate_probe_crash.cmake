lever_e2e_test(annotate_probe_crash ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_probe_crash.sh TIMEOUT 120)
