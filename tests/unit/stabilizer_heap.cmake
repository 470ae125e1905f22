# The shuffling heap's layers (src/stabilizer/runtime/heap_{base,lane,shuffle,large}.c),
# without the exported malloc API. Runtime code, built from its sources (and
# base's) into the test, under the sanitizers in the sanitizer pass.
lever_unit_test(test_stabilizer_heap
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_stabilizer_heap.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/heap_base.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/heap_lane.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/heap_shuffle.c
          ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/heap_large.c
          ${LEVER_BASE_SOURCES}
  RUNTIME)
