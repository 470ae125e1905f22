# Fixed work (2 x 80 rounds of critical_path): 58-95 s at load averages 15-23
# on a 2-vCPU VM, against 120 s before; 240 s leaves 2.5x.
lever_e2e_test(causal_progress ${CMAKE_SOURCE_DIR}/tests/e2e/causal_progress.sh TIMEOUT 240)
