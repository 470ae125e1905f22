lever_e2e_test(causal_output ${CMAKE_SOURCE_DIR}/tests/e2e/causal_output.sh TIMEOUT 240)
# Needs root (mount -t tmpfs); reports SKIPPED otherwise.
lever_e2e_test(causal_output_full_disk ${CMAKE_SOURCE_DIR}/tests/e2e/causal_output_full_disk.sh
  TIMEOUT 120 SKIP_RETURN_CODE 77)
