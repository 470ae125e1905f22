# lever layout record --source=clock on the designed program record_hot
# (tests/programs/layout): samples on the load of `hot`, data addresses on
# the field, fallback from pmu, children, merge and pprof export.
lever_e2e_test(layout_record ${CMAKE_SOURCE_DIR}/tests/e2e/layout_record.sh)
