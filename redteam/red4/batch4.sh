#!/bin/bash
cd /work/red4
while pgrep -x -f "/bin/bash ./batch3.sh" >/dev/null || pgrep -x -f "/bin/bash ./batch2.sh" >/dev/null; do sleep 5; done
for pf in neg/a18b_conj_copy_negation_methods; do
  ./run.sh ${pf%%/*} ${pf#*/}.py
done
