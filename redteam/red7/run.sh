#!/bin/bash
# usage: run.sh file example
f=$1; ex=$2
cd /work/wt-red7 && PYTHONPATH=/work/wt-red7 LITELLM_LOCAL_MODEL_COST_MAP=True timeout 900 /work/main/.venv/bin/python -m xe_forge check /work/red7/$f.py -r examples/$ex/kernel_pytorch.py -s examples/$ex/spec.yaml --json > /work/red7/$f.json 2>/work/red7/$f.err; rc=$?
echo "$f $ex rc=$rc" >> /work/red7/rcs.txt
