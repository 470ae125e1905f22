# Programs for the Stabilizer runtime's tests (tests/e2e/stabilize_*.sh):
# heap_bits runs NIST tests on heap addresses; heap_api exercises the whole
# allocation API. Built as a user would build them.
set(STABILIZER_PROGRAMS_DIR ${CMAKE_BINARY_DIR}/tests/programs/stabilizer)
add_executable(stabilizer_prog_heap_bits ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/heap_bits.c)
target_link_libraries(stabilizer_prog_heap_bits PRIVATE lever_stats lever_base m)
set_target_properties(stabilizer_prog_heap_bits PROPERTIES OUTPUT_NAME heap_bits
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
add_executable(stabilizer_prog_heap_api ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/heap_api.c)
target_compile_options(stabilizer_prog_heap_api PRIVATE -O1 -fno-builtin)
target_link_libraries(stabilizer_prog_heap_api PRIVATE Threads::Threads)
set_target_properties(stabilizer_prog_heap_api PROPERTIES OUTPUT_NAME heap_api
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
