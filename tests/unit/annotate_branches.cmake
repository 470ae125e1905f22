# Branch outcomes of lever annotate record --branches: the decoder and
# condition evaluator of the runtime's SIGTRAP handler (runtime/branches.h)
# against the processor, and the planner (src/annotate/plan_branches.c) on
# tests/programs/annotate/probe_branches.c.
lever_unit_test(test_annotate_branches
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_branches.c
  LIBS lever_annotate lever_base m)
target_include_directories(test_annotate_branches PRIVATE ${CMAKE_SOURCE_DIR}/src)
add_dependencies(test_annotate_branches annotate_probe_branches_plain)
