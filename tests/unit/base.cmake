lever_unit_test(test_base SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_base.c LIBS lever_base)
