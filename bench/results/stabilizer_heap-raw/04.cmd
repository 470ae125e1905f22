sort -n TMP/sort.txt
