lever_e2e_test(annotate_plan_size ${CMAKE_SOURCE_DIR}/tests/e2e/annotate_plan_size.sh TIMEOUT 300)
