# Issue 15 must-show 3: every probe registered twice gives statistically
# equivalent distributions (TOST, margin 0.5 pooled sd, alpha 0.05).
lever_e2e_test(annotate_double_probe ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_double_probe.sh TIMEOUT 300)
