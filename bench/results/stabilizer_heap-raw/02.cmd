TMP/malloc_heavy 2000000 1
