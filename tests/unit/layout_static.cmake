# layout_static_write() (src/layout/static*.c, dwarf*.c), the API the
# collectors call, on static_refs.c (built by tests/programs/layout_static.cmake,
# which also makes this test depend on it).
lever_unit_test(test_layout_static
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout_static.c
  LIBS lever_layout lever_report lever_elf lever_base m)
# The register-type propagation on hand-assembled code (no compiler involved).
lever_unit_test(test_layout_static_refs
  SOURCES ${CMAKE_SOURCE_DIR}/tests/unit/test_layout_static_refs.c
  LIBS lever_layout lever_report lever_elf lever_base m)
