# lever annotate record --branches: exact outcome strings, SIGTRAP transparency.
lever_e2e_test(annotate_branches ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_branches.sh TIMEOUT 120)
