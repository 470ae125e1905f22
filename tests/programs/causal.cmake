# Robustness programs for the causal profiler (tests/e2e/causal_robustness.sh,
# causal_sync_accounting.sh): each exercises one risk and prints the same
# output with or without lever. Built as a user would build them.
set(CAUSAL_PROGRAMS_DIR ${CMAKE_BINARY_DIR}/tests/programs/causal)
set(CAUSAL_PROGRAMS_FLAGS -g -O2 -fno-omit-frame-pointer -pthread)

function(causal_program name src)
  add_executable(causal_prog_${name} ${src})
  target_compile_options(causal_prog_${name} PRIVATE ${CAUSAL_PROGRAMS_FLAGS})
  target_link_libraries(causal_prog_${name} PRIVATE Threads::Threads)
  set_target_properties(causal_prog_${name} PROPERTIES OUTPUT_NAME ${name}
    RUNTIME_OUTPUT_DIRECTORY ${CAUSAL_PROGRAMS_DIR})
endfunction()

foreach(name prodcons pingpong sigprof_handler fork_exec threads1000 exit_thread
    rwlock_barrier_sem sleeps eintr_waits sigwait_prof progress_threads fd_budget)
  causal_program(${name} ${CMAKE_SOURCE_DIR}/tests/programs/causal/${name}.c)
endforeach()
causal_program(cxx_threads ${CMAKE_SOURCE_DIR}/tests/programs/causal/cxx_threads.cpp)
# The same waits through glibc's _FORTIFY_SOURCE checking variants.
causal_program(eintr_waits_fortified ${CMAKE_SOURCE_DIR}/tests/programs/causal/eintr_waits.c)
target_compile_definitions(causal_prog_eintr_waits_fortified PRIVATE _FORTIFY_SOURCE=2)
causal_program(eintr_waits_latency ${CMAKE_SOURCE_DIR}/tests/programs/causal/eintr_waits.c)
target_compile_definitions(causal_prog_eintr_waits_latency PRIVATE EINTR_WAITS_LATENCY)
# Written for Coz: includes Debian's /usr/include/coz.h (package coz-profiler).
# Without it causal_robustness runs without that program: say so as a
# skipped test rather than let the case vanish.
if(EXISTS /usr/include/coz.h)
  causal_program(coz_compat ${CMAKE_SOURCE_DIR}/tests/programs/causal/coz_compat.c)
else()
  lever_skipped_test(causal_coz_compat
    "/usr/include/coz.h is missing (Debian package coz-profiler): causal_robustness runs without its coz_compat program")
endif()

# "Some other LD_PRELOAD library", to check lever shares LD_PRELOAD.
add_library(causal_noop_preload MODULE ${CMAKE_SOURCE_DIR}/tests/programs/causal/noop_preload.c)
target_compile_options(causal_noop_preload PRIVATE ${CAUSAL_PROGRAMS_FLAGS})
target_link_libraries(causal_noop_preload PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(causal_noop_preload PROPERTIES OUTPUT_NAME noop_preload PREFIX "lib"
  LIBRARY_OUTPUT_DIRECTORY ${CAUSAL_PROGRAMS_DIR})
