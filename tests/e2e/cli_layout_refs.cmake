# lever layout refs: precision and recall of the static references on
# static_refs.c (gcc/clang, -O0/-O2), the record `report` reads, the cache,
# errors (cli_layout_refs); layouts against pahole (cli_layout_refs_pahole).
lever_e2e_test(cli_layout_refs ${CMAKE_SOURCE_DIR}/tests/e2e/cli_layout_refs.sh)
lever_e2e_test(cli_layout_refs_pahole ${CMAKE_SOURCE_DIR}/tests/e2e/cli_layout_refs_pahole.sh)
