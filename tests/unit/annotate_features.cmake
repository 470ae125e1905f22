# The feature interpreter of liblever-annotate.so (features_eval.c with its
# safe reads and the signal interposition they rely on), compiled into the test from its sources (RUNTIME label: the
# sanitizer pass runs it under ASan+UBSan).
lever_unit_test(test_annotate_features_eval
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_features_eval.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/features_eval.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/safe_read.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_signals.c
          ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_real.c
  LIBS m ${CMAKE_DL_LIBS} Threads::Threads RUNTIME)

# The planner (src/annotate/plan_features.c) joined with the interpreter on
# the feature test programs (tests/programs/annotate_features.cmake).
lever_unit_test(test_annotate_features_plan
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_annotate_features_plan.c
  LIBS lever_annotate lever_base m)
add_dependencies(test_annotate_features_plan annotate_features_programs)
