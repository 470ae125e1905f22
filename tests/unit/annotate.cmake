# The annotate module (src/annotate, Freud's analysis half): the language on
# every example of the seed, records with a fuzz loop, clustering, check and
# predict (test_annotate); the Appendix A micro-benchmark end to end on a
# seeded synthetic record (test_annotate_appendix_a). Both carry the
# "analysis" label (lever_unit_test), so the ASan+UBSan pass runs them.
lever_unit_test(test_annotate
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate.c
  LIBS lever_annotate lever_base m)
lever_unit_test(test_annotate_appendix_a
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_appendix_a.c
  LIBS lever_annotate lever_base m)
