A: TMP/fr-plain compute 40
B: TMP/fr-lever compute 40
