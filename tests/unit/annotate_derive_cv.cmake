# derive's cross-validation rule (doc/annotate.md, derive step 6): a
# regression no better than the mean on held-out calls falls back.
lever_unit_test(test_annotate_derive_cv
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_derive_cv.c
  LIBS lever_annotate lever_base m)
