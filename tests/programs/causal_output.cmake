# Programs for the causal profile writer's tests (tests/e2e/causal_output.sh).
add_executable(causal_output_daemon ${CMAKE_SOURCE_DIR}/tests/programs/causal_output/daemon.c)
target_compile_options(causal_output_daemon PRIVATE -g -O1 -fno-omit-frame-pointer)
target_include_directories(causal_output_daemon PRIVATE ${CMAKE_SOURCE_DIR}/include)
set_target_properties(causal_output_daemon PROPERTIES OUTPUT_NAME daemon
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs/causal_output)
