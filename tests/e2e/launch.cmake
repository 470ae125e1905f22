# The launcher shared by lever causal and lever stabilize (src/launch): programs
# that cannot take a preloaded runtime are refused.
lever_e2e_test(cli_launch_static ${CMAKE_SOURCE_DIR}/tests/e2e/cli_launch_static.sh)
# Messages that name the real cause (issue 14 point 12), through the real runtimes.
lever_e2e_test(causal_messages ${CMAKE_SOURCE_DIR}/tests/e2e/causal_messages.sh TIMEOUT 300)
