# The eight metrics of lever annotate record end to end, on functions that do
# known amounts of each (tests/programs/annotate/metrics_known.c).
lever_e2e_test(annotate_metrics ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_metrics.sh TIMEOUT 120)
