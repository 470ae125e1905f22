# Load amplification analysis (src/causal/amp.c): the scalability curve,
# hand-computed, and the per-load views and guard rails.
lever_unit_test(test_causal_amp
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_amp.c
  LIBS lever_causal lever_stats lever_base m)
