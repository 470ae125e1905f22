# The seed's Appendix A micro-benchmark (spec/freud.md §6.6), built as the
# seed built it: -O2 with debug info, the tested functions kept out of line
# (noipa in the source). tests/e2e/annotate_appendix_a.sh records it.
set(ANNOTATE_PROGRAMS_DIR ${CMAKE_BINARY_DIR}/tests/programs/annotate)
add_executable(appendix_a ${CMAKE_SOURCE_DIR}/tests/programs/annotate/appendix_a.c
                          ${CMAKE_SOURCE_DIR}/tests/programs/annotate/appendix_a_cxx.cc)
target_compile_options(appendix_a PRIVATE -g -O2 -fno-omit-frame-pointer)
target_link_libraries(appendix_a PRIVATE m)
set_target_properties(appendix_a PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${ANNOTATE_PROGRAMS_DIR}
                      LINKER_LANGUAGE CXX)

# A test tool (issue 15 must-show 3, tests/e2e/annotate_double_probe.sh): TOST
# equivalence of the two probes' distributions in a doubly probed record.
add_executable(record_equivalence
  ${CMAKE_SOURCE_DIR}/tests/programs/annotate/record_equivalence.c)
target_link_libraries(record_equivalence PRIVATE lever_annotate lever_stats lever_base m)
set_target_properties(record_equivalence PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${ANNOTATE_PROGRAMS_DIR})

# Functions with known metrics (tests/e2e/annotate_metrics.sh), and the same
# with an allocator of its own in the executable.
add_executable(metrics_known ${CMAKE_SOURCE_DIR}/tests/programs/annotate/metrics_known.c)
add_executable(metrics_own_malloc ${CMAKE_SOURCE_DIR}/tests/programs/annotate/metrics_known.c
                                  ${CMAKE_SOURCE_DIR}/tests/programs/annotate/own_malloc.c)
foreach(t metrics_known metrics_own_malloc)
  target_compile_options(${t} PRIVATE -g -O2 -fno-builtin)
  target_link_libraries(${t} PRIVATE Threads::Threads)
  set_target_properties(${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${ANNOTATE_PROGRAMS_DIR})
endforeach()
