# lever cc: reading compiler command lines, link-order randomization (the
# driver library), and the stack part of the stabilizer runtime (linked
# against runtime/stack.c, as the causal runtime's mechanism tests are).
lever_unit_test(test_stabilizer_cc SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stabilizer_cc.c
  LIBS lever_stabilizer_cc lever_base)
lever_unit_test(test_stabilizer_stack
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stabilizer_stack.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/stack.c
  LIBS lever_base Threads::Threads RUNTIME)
