TMP/malloc_heavy 1000000 2
