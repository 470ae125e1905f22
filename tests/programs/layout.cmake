# The designed program of issue 17's must-show 2 (tests/programs/layout/designed.c),
# built plainly as a compile check and as the bare baseline of
# bench/layout/designed.sh; tests/e2e/layout_instr.sh builds it with
# `lever cc --layout` itself, once per layout.
add_executable(layout_designed ${CMAKE_SOURCE_DIR}/tests/programs/layout/designed.c)
target_compile_options(layout_designed PRIVATE -g -O2)
target_link_libraries(layout_designed PRIVATE Threads::Threads)
set_target_properties(layout_designed PROPERTIES OUTPUT_NAME designed
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs/layout)
