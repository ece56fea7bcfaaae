#!/bin/bash
# usage: redteam/run.sh KERNEL REF SPEC [extra args]   (paths relative to the repo root)
# prints RC and the verdict's first finding (or PASSED) on one line
cd "$(dirname "$0")/.." && source /work/venv/bin/activate
export PYTHONPATH=$PWD LITELLM_LOCAL_MODEL_COST_MAP=True
k=$1; r=$2; s=$3; shift 3
python -m xe_forge check "$k" --reference "$r" --spec "$s" --device cpu --json "$@" > /tmp/red1_out.json 2>/tmp/red1_err.txt
rc=$?
python - "$rc" "$k" <<'PY'
import json, sys
rc, k = sys.argv[1], sys.argv[2]
try:
    d = json.load(open('/tmp/red1_out.json'))
    v = d['verdict']
    if v.get('passed'):
        msg = 'PASSED; notes: ' + ' | '.join(v.get('notes', []))[:300]
    else:
        f = (v.get('findings') or [{}])[0]
        msg = f"[{v.get('stage_failed')}/{f.get('check')}] {f.get('message')}"
except Exception as e:
    msg = 'no json: ' + open('/tmp/red1_err.txt').read()[-500:] + open('/tmp/red1_out.json').read()[-500:]
print(f"RC={rc} {k}: {msg}")
PY
