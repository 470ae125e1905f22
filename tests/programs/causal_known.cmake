# Programs with known causal answers, built as a user would build them.
set(CAUSAL_KNOWN_DIR ${CMAKE_BINARY_DIR}/tests/programs/causal_known)
add_executable(critical_path ${CMAKE_SOURCE_DIR}/tests/programs/causal_known/critical_path.c)
target_compile_options(critical_path PRIVATE -g -O2 -fno-omit-frame-pointer)
target_link_libraries(critical_path PRIVATE Threads::Threads)
set_target_properties(critical_path PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CAUSAL_KNOWN_DIR})
