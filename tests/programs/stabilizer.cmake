# Programs for the Stabilizer runtime's tests (tests/e2e/stabilize_*.sh):
# heap_bits runs NIST tests on heap addresses; heap_api exercises the whole
# allocation API. Built as a user would build them.
set(STABILIZER_PROGRAMS_DIR ${CMAKE_BINARY_DIR}/tests/programs/stabilizer)
# heap_bits compiles the NIST tests itself rather than linking lever_stats,
# which the sanitizer build instruments: ASan's malloc would then refuse the
# preloaded heap.
add_executable(stabilizer_prog_heap_bits ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/heap_bits.c
  ${CMAKE_SOURCE_DIR}/src/stats/nist.c ${CMAKE_SOURCE_DIR}/src/stats/distributions.c)
target_link_libraries(stabilizer_prog_heap_bits PRIVATE PkgConfig::GSL m)
set_target_properties(stabilizer_prog_heap_bits PROPERTIES OUTPUT_NAME heap_bits
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
add_executable(stabilizer_prog_heap_api ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/heap_api.c)
target_compile_options(stabilizer_prog_heap_api PRIVATE -O1 -fno-builtin)
target_link_libraries(stabilizer_prog_heap_api PRIVATE Threads::Threads)
set_target_properties(stabilizer_prog_heap_api PROPERTIES OUTPUT_NAME heap_api
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
# addr_bits: the same NIST tests on addresses read from standard input (code
# copies from the runtime's code log, in e2e stabilize_code_random and
# bench/stabilizer/nist.sh). code_bits, the program whose copies it tests, is
# built by that test with lever cc.
add_executable(stabilizer_prog_addr_bits ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/addr_bits.c
  ${CMAKE_SOURCE_DIR}/src/stats/nist.c ${CMAKE_SOURCE_DIR}/src/stats/distributions.c)
target_link_libraries(stabilizer_prog_addr_bits PRIVATE PkgConfig::GSL m)
set_target_properties(stabilizer_prog_addr_bits PROPERTIES OUTPUT_NAME addr_bits
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
# heap_return: 1 GiB allocated and freed in rounds of different sizes; the
# peak resident size must stay bounded (memory is given back).
add_executable(stabilizer_prog_heap_return ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/heap_return.c)
target_compile_options(stabilizer_prog_heap_return PRIVATE -fno-builtin)
set_target_properties(stabilizer_prog_heap_return PROPERTIES OUTPUT_NAME heap_return
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
# heap_classes: a few dozen live objects in each of 40 size classes; the
# growth of its resident size must stay bounded (classes share pages).
add_executable(stabilizer_prog_heap_classes ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/heap_classes.c)
target_compile_options(stabilizer_prog_heap_classes PRIVATE -fno-builtin)
set_target_properties(stabilizer_prog_heap_classes PROPERTIES OUTPUT_NAME heap_classes
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
# heap_threads: two threads allocating in turn; counts the cache lines their
# objects share.
add_executable(stabilizer_prog_heap_threads ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer/heap_threads.c)
target_compile_options(stabilizer_prog_heap_threads PRIVATE -fno-builtin)
target_link_libraries(stabilizer_prog_heap_threads PRIVATE Threads::Threads)
set_target_properties(stabilizer_prog_heap_threads PROPERTIES OUTPUT_NAME heap_threads
  RUNTIME_OUTPUT_DIRECTORY ${STABILIZER_PROGRAMS_DIR})
