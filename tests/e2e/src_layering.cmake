# The layering of src/ (doc/architecture.md): which room may include which.
# Reads the sources only; needs no build.
lever_e2e_test(src_layering ${CMAKE_SOURCE_DIR}/tests/layering.sh)
