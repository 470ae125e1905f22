# elf module: loaded objects, debug-file lookup, line tables. The test reads
# the programs built by tests/programs/symbolize.cmake (target
# symbolize_programs, defined there).
lever_unit_test(test_elf SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_elf.c LIBS lever_elf)
add_dependencies(test_elf symbolize_programs)
find_program(LEVER_TEST_CLANG NAMES clang)
if(LEVER_TEST_CLANG)
  target_compile_definitions(test_elf PRIVATE LEVER_TEST_HAVE_CLANG=1)
endif()
