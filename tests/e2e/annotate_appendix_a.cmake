# Issue 15 must-show 2: the seed's Appendix A micro-benchmark recorded end to
# end (features, exact mem, derived model classes; time as a lower bound).
lever_e2e_test(annotate_appendix_a ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_appendix_a.sh TIMEOUT 600)
