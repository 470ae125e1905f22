# Code randomization: the code area's allocators (runtime/code_area.c).
lever_unit_test(test_stabilizer_code
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stabilizer_code.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/code_area.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/code_unwind.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/code_gdb.c
  LIBS lever_base RUNTIME)
