# src/launch: environments, LD_PRELOAD, Stabilizer settings, PATH resolution,
# static-binary detection and wait statuses.
lever_unit_test(test_launch SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_launch.c LIBS lever_launch)
