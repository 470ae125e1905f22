# The AMP validation program (dissertation Figure 6.1): producers and
# consumers around an unbounded queue, with an arrival point. Used by
# tests/e2e/causal_amp.sh and bench/amp/run.sh.
add_executable(amp_prodcons ${CMAKE_SOURCE_DIR}/tests/programs/amp/prodcons.c)
target_compile_options(amp_prodcons PRIVATE -g -O1 -fno-omit-frame-pointer -pthread)
target_include_directories(amp_prodcons PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(amp_prodcons PRIVATE Threads::Threads)
set_target_properties(amp_prodcons PROPERTIES OUTPUT_NAME prodcons
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs/amp)
