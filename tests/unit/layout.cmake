# The struct-layout analysis (src/layout): the data model, algorithms A–G
# against the thesis's and the spec's worked vectors (test_layout), the
# cache model against hand-computed answers (test_layout_cache), and the
# pahole-style, C and JSON output against golden text (test_layout_print).
lever_unit_test(test_layout
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout.c
  LIBS lever_layout lever_report lever_base m)
lever_unit_test(test_layout_cache
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout_cache.c
  LIBS lever_layout lever_report lever_base m)
if(JANSSON_FOUND)
  lever_unit_test(test_layout_print
    SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout_print.c
    LIBS lever_layout lever_report lever_base PkgConfig::JANSSON m)
endif()
lever_unit_test(test_layout_record
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout_record.c
  LIBS lever_layout lever_report lever_base m)
# The collector of `lever layout record` on synthetic perf bytes, a fake
# sysfs PMU, and capstone decoding with effective addresses (test_layout_collect).
lever_unit_test(test_layout_collect
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout_collect.c
  LIBS lever_layout lever_report lever_base m)
# The pprof export decoded back with protobuf-c from the same profile.proto.
lever_unit_test(test_layout_pprof
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout_pprof.c
  LIBS lever_layout lever_layout_proto lever_report lever_base PkgConfig::ZLIB m)
