# lever cc (tests/e2e/stabilizer_cc*.sh): the programs are built by the tests
# themselves, with lever cc. Here only the test-only start-up of the stack
# part of the runtime (stabilizer_cc/stack_pads_shim.c + runtime/stack.c).
add_library(stack_pads_shim SHARED ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer_cc/stack_pads_shim.c
            ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/stack.c ${LEVER_BASE_SOURCES})
target_link_libraries(stack_pads_shim PRIVATE Threads::Threads)
# As liblever-stabilizer.so: a missing symbol fails the build, not the test.
target_link_options(stack_pads_shim PRIVATE -Wl,--no-undefined)
set_target_properties(stack_pads_shim PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs/stabilizer_cc)
