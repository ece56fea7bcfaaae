#!/bin/bash
# usage: run.sh path/to/file.py EXAMPLE_DIR [extra args]
f=$1; ex=$2; shift 2
out=${f%.py}.json
cd /work/wt-red6
start=$(date +%s)
PYTHONPATH=/work/wt-red6 LITELLM_LOCAL_MODEL_COST_MAP=True timeout 900 /work/main/.venv/bin/python -m xe_forge check $f -r examples/$ex/kernel_pytorch.py -s examples/$ex/spec.yaml --json "$@" > $out 2> ${f%.py}.err
rc=$?
end=$(date +%s)
summ=$(/work/main/.venv/bin/python /work/red6/summ.py $out 2>/dev/null)
echo "$(basename $f) ex=$ex rc=$rc t=$((end-start))s $summ" | tee -a /work/red6/log.txt
