# The launcher shared by lever causal and lever stabilize (src/launch): programs
# that cannot take a preloaded runtime are refused.
lever_e2e_test(cli_launch_static ${CMAKE_SOURCE_DIR}/tests/e2e/cli_launch_static.sh)
