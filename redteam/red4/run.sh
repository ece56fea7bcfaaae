#!/bin/bash
# usage: run.sh problem file.py [extra args]
cd /work/main && . /work/venv/bin/activate && export LITELLM_LOCAL_MODEL_COST_MAP=True
p=$1; f=$2; shift 2
log=/work/red4/$p/${f%.py}.log
nice -n 19 timeout 300 xe-forge check /work/red4/$p/$f -r /work/red4/$p/ref.py --device cpu "$@" > $log 2>&1
rc=$?
echo "$p/$f rc=$rc :: $(grep -E 'FAIL|fail |refused|PASSED|FAILED|REJECT|error' $log | grep -v '│ pass' | head -3 | tr -s ' ' | cut -c1-300 | tr '\n' ' ')" | tee -a /work/red4/results.txt
