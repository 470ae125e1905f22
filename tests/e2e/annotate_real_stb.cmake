# A real library routine from Debian sources annotated end to end (issue 16
# must-show 3): stb_image_write's PNG encoder (libstb-dev), record -> derive
# -> HTML, then `check` on an unchanged run, an injected input-dependent
# regression and an injected constant cost. Offline; about 20 s.
lever_e2e_test(annotate_real_stb ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_real_stb.sh TIMEOUT 300)
