gzip -6c TMP/sort.txt
