A: TMP/fr-lever compute 40
B: BUILD/bin/lever stabilize --stack --seed=1 -- TMP/fr-lever compute 40
