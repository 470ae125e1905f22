# Code randomization tests (tests/e2e/stabilizer_code.sh): a preloadable
# driver that starts the code part the way runtime/init.c does, built with
# the code*.c sources it tests (and base and elf, as the runtime is). The test programs themselves are compiled by
# the e2e script, with gcc and clang, at -O0 and -O2.
file(GLOB STABILIZER_CODE_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/src/stabilizer/runtime/code*.c)
add_library(stabilizer_code_driver MODULE
  ${CMAKE_SOURCE_DIR}/tests/programs/stabilizer_code/driver.c
  ${STABILIZER_CODE_SOURCES} ${LEVER_BASE_SOURCES} ${LEVER_ELF_SOURCES})
target_compile_options(stabilizer_code_driver PRIVATE -ftls-model=initial-exec)
target_link_libraries(stabilizer_code_driver PRIVATE PkgConfig::LIBDW PkgConfig::LIBELF
  PkgConfig::CAPSTONE
  Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(stabilizer_code_driver PROPERTIES C_VISIBILITY_PRESET hidden
  PREFIX "lib" OUTPUT_NAME stabilizer_code_driver
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/programs/stabilizer_code)
