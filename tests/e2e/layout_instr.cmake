# lever cc --layout and lever layout record --source=instr on the designed
# program (issue 17, must-show 2): the right structs and fields, the
# suggested layout applied cuts the model's misses by the estimate (20%),
# false sharing gone; sampled default rate; a cut trace; errors.
lever_e2e_test(layout_instr ${CMAKE_SOURCE_DIR}/tests/e2e/layout_instr.sh TIMEOUT 600)
