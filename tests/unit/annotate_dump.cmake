# `lever annotate dump` as a library (src/annotate/dump.c): byte-exact CSV and
# JSON of a small record ("analysis" label: the ASan+UBSan pass runs it).
lever_unit_test(test_annotate_dump
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_dump.c
  LIBS lever_annotate lever_base m)
