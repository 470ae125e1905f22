# Stabilizer on eight real programs built from Debian sources with lever cc
# (bench/stabilizer/programs.sh): byte-identical output under every
# combination of randomizations, link-randomized or not. Fetches sources with
# apt-get source and builds them (cached in build/stabilizer-debian): several
# minutes from scratch, so it takes both of ctest's slots.
lever_e2e_test(stabilizer_debian ${CMAKE_SOURCE_DIR}/tests/e2e/stabilizer_debian.sh)
set_tests_properties(stabilizer_debian PROPERTIES LABELS "e2e;stabilizer;debian"
  TIMEOUT 1200 PROCESSORS 2)
