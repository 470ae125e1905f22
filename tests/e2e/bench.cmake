# lever bench, lever compare and lever stats: behaviour (options, errors, the
# randomized environment, exports, verdicts on sample files, the suite ANOVA,
# interleaving), never timings.
lever_e2e_test(bench_cli ${CMAKE_SOURCE_DIR}/tests/e2e/bench_cli.sh TIMEOUT 300)
lever_e2e_test(bench_compare ${CMAKE_SOURCE_DIR}/tests/e2e/bench_compare.sh TIMEOUT 300)
# --randomize=code,stack,link with programs built by lever cc.
lever_e2e_test(bench_randomize ${CMAKE_SOURCE_DIR}/tests/e2e/bench_randomize.sh TIMEOUT 300)
# Numbers at the edges: huge, subnormal, zero and negative values.
lever_e2e_test(bench_numbers ${CMAKE_SOURCE_DIR}/tests/e2e/bench_numbers.sh TIMEOUT 120)
# Nothing lost: cleanup failures, SIGINT, --timeout, unwritable exports, stdout errors.
lever_e2e_test(bench_robustness ${CMAKE_SOURCE_DIR}/tests/e2e/bench_robustness.sh TIMEOUT 300)
