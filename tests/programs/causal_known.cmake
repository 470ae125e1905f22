# Programs with known causal answers, built as a user would build them.
set(CAUSAL_KNOWN_DIR ${CMAKE_BINARY_DIR}/tests/programs/causal_known)
add_executable(critical_path ${CMAKE_SOURCE_DIR}/tests/programs/causal_known/critical_path.c)
target_compile_options(critical_path PRIVATE -g -O2 -fno-omit-frame-pointer)
target_link_libraries(critical_path PRIVATE Threads::Threads)
set_target_properties(critical_path PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CAUSAL_KNOWN_DIR})

# A program whose work is in a library it dlopens after start-up.
add_library(dlwork SHARED ${CMAKE_SOURCE_DIR}/tests/programs/causal_known/dlwork.c)
target_compile_options(dlwork PRIVATE -g -O2 -fno-omit-frame-pointer)
set_target_properties(dlwork PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CAUSAL_KNOWN_DIR})
add_executable(dlopen_main ${CMAKE_SOURCE_DIR}/tests/programs/causal_known/dlopen_main.c)
target_compile_options(dlopen_main PRIVATE -g -O2 -fno-omit-frame-pointer)
target_link_libraries(dlopen_main PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(dlopen_main PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CAUSAL_KNOWN_DIR})

# Latency points with a known answer (tests/e2e/causal_latency.sh).
add_executable(latency ${CMAKE_SOURCE_DIR}/tests/programs/causal_known/latency.c)
target_compile_options(latency PRIVATE -g -O2 -fno-omit-frame-pointer)
target_link_libraries(latency PRIVATE Threads::Threads)
set_target_properties(latency PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CAUSAL_KNOWN_DIR})
