# Programs for the layout room's tests (tests/e2e/layout_*.sh): record_hot
# reads one field of a struct at random over 64 MiB (the `clock` source's
# designed program: one stalling load, known data addresses). Built with frame pointers and -g as a user profiling
# it would; -O2 so that the loop is the tight one a real program has.
set(LAYOUT_PROGRAMS_DIR ${CMAKE_BINARY_DIR}/tests/programs/layout)
add_executable(layout_prog_record_hot ${CMAKE_SOURCE_DIR}/tests/programs/layout/record_hot.c)
target_compile_options(layout_prog_record_hot PRIVATE -O2 -g -fno-omit-frame-pointer)
set_target_properties(layout_prog_record_hot PROPERTIES OUTPUT_NAME record_hot
  RUNTIME_OUTPUT_DIRECTORY ${LAYOUT_PROGRAMS_DIR})
# record_share: two threads write neighbouring fields of one line (false sharing).
add_executable(layout_prog_record_share ${CMAKE_SOURCE_DIR}/tests/programs/layout/record_share.c)
target_compile_options(layout_prog_record_share PRIVATE -O2 -g -fno-omit-frame-pointer)
target_link_libraries(layout_prog_record_share PRIVATE Threads::Threads)
set_target_properties(layout_prog_record_share PROPERTIES OUTPUT_NAME record_share
  RUNTIME_OUTPUT_DIRECTORY ${LAYOUT_PROGRAMS_DIR})
