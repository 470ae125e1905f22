A: bash WORK/cc-bzip2-plain.sh
B: bash WORK/cc-bzip2-stack.sh

WORK/cc-bzip2-plain.sh:
. bench/stabilizer/programs.sh
LEVER_PROGRAMS_LAUNCHER='' programs_run bzip2 WORK/lever/bzip2/bzip2 bench /dev/null

WORK/cc-bzip2-stack.sh:
. bench/stabilizer/programs.sh
LEVER_PROGRAMS_LAUNCHER=BUILD/bin/lever\ stabilize\ --stack\ --seed=1\ -- programs_run bzip2 WORK/lever/bzip2/bzip2 bench /dev/null
