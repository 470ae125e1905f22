# The feature test programs (tests/programs/annotate/features_*.c, .cc) for
# tests/unit/test_annotate_features_plan.c: C and C++, built with gcc and
# clang-14, -O0 and -O2, DWARF 4 and 5, each with the harness and the
# runtime's feature interpreter compiled in (features-LANG-CC-dN-ON).

set(AF_SRC ${CMAKE_CURRENT_LIST_DIR}/annotate)
set(AF_OUT ${CMAKE_BINARY_DIR}/tests/programs/annotate)
# the safe reads' fault fix-up relies on the runtime's signal interposition
set(AF_RUNTIME ${CMAKE_SOURCE_DIR}/src/annotate/runtime/features_eval.c
               ${CMAKE_SOURCE_DIR}/src/annotate/runtime/safe_read.c
               ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_signals.c
               ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_real.c)
set(AF_DEPS ${AF_SRC}/features_harness.c ${AF_SRC}/features_harness.h ${AF_RUNTIME}
            ${CMAKE_SOURCE_DIR}/src/annotate/runtime/features.h
            ${CMAKE_SOURCE_DIR}/src/annotate/runtime/features_ops.h
            ${CMAKE_SOURCE_DIR}/src/annotate/runtime/safe_read.h
            ${CMAKE_SOURCE_DIR}/src/annotate/runtime/signals.h)
find_program(LEVER_TEST_GCC NAMES gcc)
find_program(LEVER_TEST_GXX NAMES g++)
find_program(LEVER_TEST_CLANG14 NAMES clang-14 clang)
find_program(LEVER_TEST_CLANGXX14 NAMES clang++-14 clang++)

set(AF_OUTPUTS)
foreach(cc gcc clang)
  if(cc STREQUAL "gcc")
    set(c_path ${LEVER_TEST_GCC})
    set(cxx_path ${LEVER_TEST_GXX})
  else()
    set(c_path ${LEVER_TEST_CLANG14})
    set(cxx_path ${LEVER_TEST_CLANGXX14})
  endif()
  if(NOT c_path OR NOT cxx_path)
    continue()
  endif()
  foreach(dwarf 4 5)
    foreach(opt O0 O2)
      set(flags -D_GNU_SOURCE -g -gdwarf-${dwarf} -${opt} -I${CMAKE_SOURCE_DIR}/src -I${AF_SRC})
      # clang leaves out the definitions of classes it expects another unit
      # to describe (std::string, an extern template): -fstandalone-debug
      # keeps them, as a user planning features of such types must too.
      set(cxx_flags ${flags})
      if(cc STREQUAL "clang")
        list(APPEND cxx_flags -fstandalone-debug)
      endif()
      set(name ${cc}-d${dwarf}-${opt})
      set(out_c ${AF_OUT}/features-c-${name})
      add_custom_command(OUTPUT ${out_c}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${AF_OUT}
        COMMAND ${c_path} ${flags} -o ${out_c} ${AF_SRC}/features_c.c
                ${AF_SRC}/features_harness.c ${AF_RUNTIME} -lm -ldl -pthread
        DEPENDS ${AF_SRC}/features_c.c ${AF_DEPS}
        COMMENT "Building feature test program features-c-${name}"
        VERBATIM)
      set(out_cpp ${AF_OUT}/features-cpp-${name})
      set(objs ${AF_OUT}/obj-${name}-harness.o ${AF_OUT}/obj-${name}-eval.o
               ${AF_OUT}/obj-${name}-safe_read.o ${AF_OUT}/obj-${name}-signals.o
               ${AF_OUT}/obj-${name}-real.o)
      add_custom_command(OUTPUT ${out_cpp}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${AF_OUT}
        COMMAND ${c_path} ${flags} -c -o ${AF_OUT}/obj-${name}-harness.o
                ${AF_SRC}/features_harness.c
        COMMAND ${c_path} ${flags} -c -o ${AF_OUT}/obj-${name}-eval.o
                ${CMAKE_SOURCE_DIR}/src/annotate/runtime/features_eval.c
        COMMAND ${c_path} ${flags} -c -o ${AF_OUT}/obj-${name}-safe_read.o
                ${CMAKE_SOURCE_DIR}/src/annotate/runtime/safe_read.c
        COMMAND ${c_path} ${flags} -c -o ${AF_OUT}/obj-${name}-signals.o
                ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_signals.c
        COMMAND ${c_path} ${flags} -c -o ${AF_OUT}/obj-${name}-real.o
                ${CMAKE_SOURCE_DIR}/src/annotate/runtime/interpose_real.c
        COMMAND ${cxx_path} ${cxx_flags} -o ${out_cpp} ${AF_SRC}/features_cpp.cc ${objs} -lm
                -ldl -pthread
        DEPENDS ${AF_SRC}/features_cpp.cc ${AF_DEPS}
        COMMENT "Building feature test program features-cpp-${name}"
        VERBATIM)
      list(APPEND AF_OUTPUTS ${out_c} ${out_cpp})
    endforeach()
  endforeach()
endforeach()
add_custom_target(annotate_features_programs ALL DEPENDS ${AF_OUTPUTS})

# The program of the end-to-end test (tests/e2e/annotate_features_record.sh),
# built as a user would (-O2 -g), and with lever cc --annotate's sled.
foreach(variant plain sled)
  set(tgt annotate_features_record_${variant})
  add_executable(${tgt} ${AF_SRC}/features_record.c)
  target_compile_options(${tgt} PRIVATE -g -O2)
  if(variant STREQUAL sled)
    target_compile_options(${tgt} PRIVATE -fpatchable-function-entry=5)
    set(out features_record_sled)
  else()
    set(out features_record)
  endif()
  set_target_properties(${tgt} PROPERTIES OUTPUT_NAME ${out} RUNTIME_OUTPUT_DIRECTORY ${AF_OUT})
endforeach()
