# Test programs of the static reference finder (`lever layout refs`,
# src/layout/static*.c, dwarf*.c): static_types.c and static_types_cxx.cc
# (layouts checked against pahole), static_refs.c (truth in function names:
# precision and recall) with gcc and clang at -O0 and -O2.
set(LS_SRC ${CMAKE_CURRENT_LIST_DIR}/layout)
set(LS_OUT ${CMAKE_BINARY_DIR}/tests/programs/layout_static)
find_program(LEVER_TEST_GCC NAMES gcc)
find_program(LEVER_TEST_GXX NAMES g++)
find_program(LEVER_TEST_CLANG14 NAMES clang-14 clang)

set(LS_OUTPUTS)
set(LS_COMPILERS)
if(LEVER_TEST_GCC)
  list(APPEND LS_COMPILERS gcc)
endif()
if(LEVER_TEST_CLANG14)
  list(APPEND LS_COMPILERS clang)
endif()
foreach(cc ${LS_COMPILERS})
  if(cc STREQUAL "gcc")
    set(cc_path ${LEVER_TEST_GCC})
  else()
    set(cc_path ${LEVER_TEST_CLANG14})
  endif()
  foreach(opt O0 O2)
    set(out ${LS_OUT}/static_refs-${cc}-${opt})
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${LS_OUT}
      COMMAND ${cc_path} -g -${opt} -o ${out} ${LS_SRC}/static_refs.c
      DEPENDS ${LS_SRC}/static_refs.c
      COMMENT "Building layout test program static_refs-${cc}-${opt}"
      VERBATIM)
    list(APPEND LS_OUTPUTS ${out})
  endforeach()
endforeach()
if(LEVER_TEST_GCC)
  set(out ${LS_OUT}/static_types)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LS_OUT}
    COMMAND ${LEVER_TEST_GCC} -g -O0 -o ${out} ${LS_SRC}/static_types.c
    DEPENDS ${LS_SRC}/static_types.c
    COMMENT "Building layout test program static_types"
    VERBATIM)
  list(APPEND LS_OUTPUTS ${out})
endif()
if(LEVER_TEST_GXX)
  set(out ${LS_OUT}/static_types_cxx)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LS_OUT}
    COMMAND ${LEVER_TEST_GXX} -g -O0 -o ${out} ${LS_SRC}/static_types_cxx.cc
    DEPENDS ${LS_SRC}/static_types_cxx.cc
    COMMENT "Building layout test program static_types_cxx"
    VERBATIM)
  list(APPEND LS_OUTPUTS ${out})
endif()
add_custom_target(layout_static_programs ALL DEPENDS ${LS_OUTPUTS})
if(TARGET test_layout_static)
  add_dependencies(test_layout_static layout_static_programs)
endif()
