# derive with features missing in part of the calls (the seed's A.18 shape).
lever_unit_test(test_annotate_derive_partial
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_derive_partial.c
  LIBS lever_annotate lever_base m)
