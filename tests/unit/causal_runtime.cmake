# Mechanism tests of the causal runtime (delay protocol), linked against the
# runtime sources they test rather than the preloaded library.
lever_unit_test(test_causal_delays
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_delays.c
          ${CMAKE_SOURCE_DIR}/src/causal/runtime/delays.c
  LIBS lever_base Threads::Threads RUNTIME)

# The sampler's tail accounting at thread exit, with sampler.c and delays.c.
lever_unit_test(test_causal_sampler
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_sampler.c
          ${CMAKE_SOURCE_DIR}/src/causal/runtime/sampler.c
          ${CMAKE_SOURCE_DIR}/src/causal/runtime/delays.c
  LIBS lever_base Threads::Threads rt RUNTIME)

# Little's law's L over an experiment's virtual time (in_flight.c), on
# closed-loop timelines worked out by hand.
lever_unit_test(test_causal_in_flight
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_causal_in_flight.c
          ${CMAKE_SOURCE_DIR}/src/causal/runtime/in_flight.c
  LIBS lever_base RUNTIME)
