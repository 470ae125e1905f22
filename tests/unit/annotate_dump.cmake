# `lever annotate dump` as a library (src/annotate/dump.c): byte-exact CSV and
# JSON of a small record ("analysis" label: the ASan+UBSan pass runs it).
lever_unit_test(test_annotate_dump
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_dump.c
  LIBS lever_annotate lever_base m)
# derive with features missing in part of the calls (the seed's A.18 shape).
lever_unit_test(test_annotate_derive_partial
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_derive_partial.c
  LIBS lever_annotate lever_base m)
