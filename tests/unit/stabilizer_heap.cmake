# The shuffling heap's layers (src/stabilizer/runtime/heap_{base,shuffle,large}.c),
# without the exported malloc API. They are runtime code: not labelled
# "analysis" and never built with the sanitizers.
add_executable(test_stabilizer_heap ${CMAKE_SOURCE_DIR}/tests/unit/test_stabilizer_heap.c
  ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/heap_base.c
  ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/heap_shuffle.c
  ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/heap_large.c
  ${LEVER_BASE_SOURCES})
target_link_libraries(test_stabilizer_heap PRIVATE PkgConfig::CMOCKA)
add_test(NAME test_stabilizer_heap COMMAND test_stabilizer_heap)
set_tests_properties(test_stabilizer_heap PROPERTIES LABELS "unit")
