lever_e2e_test(annotate_signals ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_signals.sh TIMEOUT 120)
