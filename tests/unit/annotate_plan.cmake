# Planning lever annotate record (src/annotate/plan.c) and the runtime's plan
# reader (src/annotate/runtime/plan.c, compiled in), on the probe test
# programs (tests/programs/annotate_probe.cmake).
lever_unit_test(test_annotate_plan
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_plan.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/plan.c
  LIBS lever_annotate lever_base m)
target_include_directories(test_annotate_plan PRIVATE ${CMAKE_SOURCE_DIR}/src)
add_dependencies(test_annotate_plan annotate_probe_calls_plain annotate_probe_exceptions_plain
  annotate_probe_dlopen_plain annotate_probe_dl)

# The record output of the runtime (src/annotate/runtime/output.c) with
# stand-ins for the per-thread state (RUNTIME label: ASan+UBSan pass).
lever_unit_test(test_annotate_output
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_output.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/output.c
  LIBS m RUNTIME)
target_include_directories(test_annotate_output PRIVATE ${CMAKE_SOURCE_DIR}/src)
