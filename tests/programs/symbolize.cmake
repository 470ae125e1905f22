# Test programs for the elf module (tests/unit/test_elf.c), built with both
# gcc and clang for DWARF 4/5, -O0/-O2, PIE/non-PIE, plus one with compressed
# debug sections and one whose debug information lives in a separate file
# (build-id layout, .gnu_debuglink next to the binary and in .debug/).
#
# The compilers run in tests/programs on "symbolize/../symbolize/prog.c", so
# the DWARF file and include-directory names are relative with ".." in them.

set(SYM_SRC ${CMAKE_CURRENT_LIST_DIR}/symbolize)
set(SYM_OUT ${CMAKE_BINARY_DIR}/tests/programs/symbolize)
set(SYM_INPUT symbolize/../symbolize/prog.c)
set(SYM_DEPS ${SYM_SRC}/prog.c ${SYM_SRC}/inl.h)
set(SYM_BUILD_ID 0123456789abcdef0123456789abcdef01234567)
find_program(LEVER_TEST_GCC NAMES gcc)
find_program(LEVER_TEST_CLANG NAMES clang)
find_program(LEVER_TEST_OBJCOPY NAMES objcopy)
find_program(LEVER_TEST_STRIP NAMES strip)

set(SYM_OUTPUTS)
set(SYM_COMPILERS)
if(LEVER_TEST_GCC)
  list(APPEND SYM_COMPILERS gcc)
endif()
if(LEVER_TEST_CLANG)
  list(APPEND SYM_COMPILERS clang)
endif()

foreach(cc ${SYM_COMPILERS})
  if(cc STREQUAL "gcc")
    set(cc_path ${LEVER_TEST_GCC})
  else()
    set(cc_path ${LEVER_TEST_CLANG})
  endif()
  foreach(dwarf 4 5)
    foreach(opt O0 O2)
      foreach(pie pie nopie)
        if(pie STREQUAL "pie")
          set(pie_flags -fPIE -pie)
        else()
          set(pie_flags -fno-pie -no-pie)
        endif()
        set(out ${SYM_OUT}/sym-${cc}-d${dwarf}-${opt}-${pie})
        add_custom_command(OUTPUT ${out}
          COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_OUT}
          COMMAND ${cc_path} -g -gdwarf-${dwarf} -${opt} ${pie_flags} -o ${out} ${SYM_INPUT}
          WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}
          DEPENDS ${SYM_DEPS}
          COMMENT "Building symbolize test program sym-${cc}-d${dwarf}-${opt}-${pie}"
          VERBATIM)
        list(APPEND SYM_OUTPUTS ${out})
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(LEVER_TEST_GCC)
  # A hand-written line table with known answers.
  set(out ${SYM_OUT}/hand-lines)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_OUT}
    COMMAND ${LEVER_TEST_GCC} -nostdlib -static -no-pie -Wl,-e,_start -o ${out} ${SYM_SRC}/lines.s
    DEPENDS ${SYM_SRC}/lines.s
    COMMENT "Building symbolize test program hand-lines"
    VERBATIM)
  list(APPEND SYM_OUTPUTS ${out})
endif()

if(LEVER_TEST_GCC AND LEVER_TEST_OBJCOPY AND LEVER_TEST_STRIP)
  # Compressed debug sections (SHF_COMPRESSED).
  set(out ${SYM_OUT}/sym-gcc-d5-O2-pie-gz)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SYM_OUT}
    COMMAND ${LEVER_TEST_GCC} -g -gdwarf-5 -gz=zlib -O2 -fPIE -pie -o ${out} ${SYM_INPUT}
    WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}
    DEPENDS ${SYM_DEPS}
    COMMENT "Building symbolize test program sym-gcc-d5-O2-pie-gz"
    VERBATIM)
  list(APPEND SYM_OUTPUTS ${out})

  # Separate debug information.
  string(SUBSTRING ${SYM_BUILD_ID} 0 2 id_dir)
  string(SUBSTRING ${SYM_BUILD_ID} 2 -1 id_rest)
  set(split ${SYM_OUT}/split)
  set(split_outputs
    ${split}/sym-split.full
    ${split}/sym-split.debug
    ${split}/buildid/sym-split
    ${split}/debugroot/.build-id/${id_dir}/${id_rest}.debug
    ${split}/linknext/sym-split
    ${split}/linknext/sym-split.debug
    ${split}/linkdot/sym-split
    ${split}/linkdot/.debug/sym-split.debug)
  add_custom_command(OUTPUT ${split_outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${split}/buildid
      ${split}/debugroot/.build-id/${id_dir} ${split}/emptyroot ${split}/linknext
      ${split}/linkdot/.debug
    COMMAND ${LEVER_TEST_GCC} -g -gdwarf-5 -O2 -fPIE -pie -Wl,--build-id=0x${SYM_BUILD_ID}
      -o ${split}/sym-split.full ${SYM_INPUT}
    COMMAND ${LEVER_TEST_OBJCOPY} --only-keep-debug ${split}/sym-split.full
      ${split}/sym-split.debug
    COMMAND ${LEVER_TEST_STRIP} --strip-debug -o ${split}/buildid/sym-split
      ${split}/sym-split.full
    COMMAND ${CMAKE_COMMAND} -E copy ${split}/sym-split.debug
      ${split}/debugroot/.build-id/${id_dir}/${id_rest}.debug
    COMMAND ${CMAKE_COMMAND} -E copy ${split}/sym-split.debug ${split}/linknext/sym-split.debug
    COMMAND ${LEVER_TEST_OBJCOPY} --add-gnu-debuglink=${split}/linknext/sym-split.debug
      ${split}/buildid/sym-split ${split}/linknext/sym-split
    COMMAND ${CMAKE_COMMAND} -E copy ${split}/sym-split.debug
      ${split}/linkdot/.debug/sym-split.debug
    COMMAND ${LEVER_TEST_OBJCOPY} --add-gnu-debuglink=${split}/linkdot/.debug/sym-split.debug
      ${split}/buildid/sym-split ${split}/linkdot/sym-split
    WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}
    DEPENDS ${SYM_DEPS}
    COMMENT "Building symbolize test program with separate debug information"
    VERBATIM)
  list(APPEND SYM_OUTPUTS ${split_outputs})
endif()

add_custom_target(symbolize_programs ALL DEPENDS ${SYM_OUTPUTS})
