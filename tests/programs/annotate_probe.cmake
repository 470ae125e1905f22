# Programs for the probe tests of lever annotate record (tests/e2e/annotate_probe_*.sh)
# and bench/annotate_probe: each built twice, as a user would (-O2 -g), and
# with the sled of lever cc --annotate (-fpatchable-function-entry=5).
set(ANNOTATE_PROBE_DIR ${CMAKE_BINARY_DIR}/tests/programs/annotate)
set(ANNOTATE_PROBE_SRC ${CMAKE_SOURCE_DIR}/tests/programs/annotate)

function(annotate_probe_program name src)
  foreach(variant plain sled)
    set(tgt annotate_${name}_${variant})
    add_executable(${tgt} ${ANNOTATE_PROBE_SRC}/${src})
    target_compile_options(${tgt} PRIVATE -g -O2 -fno-omit-frame-pointer -pthread)
    if(variant STREQUAL sled)
      target_compile_options(${tgt} PRIVATE -fpatchable-function-entry=5)
      set(out ${name}_sled)
    else()
      set(out ${name})
    endif()
    target_link_libraries(${tgt} PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
    set_target_properties(${tgt} PROPERTIES OUTPUT_NAME ${out}
      RUNTIME_OUTPUT_DIRECTORY ${ANNOTATE_PROBE_DIR})
  endforeach()
endfunction()

annotate_probe_program(probe_calls probe_calls.c)
annotate_probe_program(probe_longjmp probe_longjmp.c)
annotate_probe_program(probe_exceptions probe_exceptions.cpp)
annotate_probe_program(probe_signals probe_signals.c)
annotate_probe_program(probe_threads probe_threads.c)
annotate_probe_program(probe_dlopen probe_dlopen_main.c)
annotate_probe_program(probe_crash probe_crash.c)
annotate_probe_program(probe_loop probe_loop.c)

add_library(annotate_probe_dl SHARED ${ANNOTATE_PROBE_SRC}/probe_dlopen_lib.c)
target_compile_options(annotate_probe_dl PRIVATE -g -O2)
set_target_properties(annotate_probe_dl PROPERTIES OUTPUT_NAME probe_dl
  LIBRARY_OUTPUT_DIRECTORY ${ANNOTATE_PROBE_DIR})
annotate_probe_program(probe_nested probe_nested.c)
annotate_probe_program(probe_altstack probe_altstack.c)
annotate_probe_program(probe_sigsegv probe_sigsegv.c)
