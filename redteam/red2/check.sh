#!/usr/bin/env bash
# usage: redteam/red2/check.sh DIR/FILE.py  -> prints "FILE rc FIRSTLINE"
cd "$(dirname "$0")/../.." || exit 2
source /work/venv/bin/activate
export LITELLM_LOCAL_MODEL_COST_MAP=True
f="$1"; d="$(dirname "$f")"
out="$(PYTHONPATH="$PWD" timeout 300 python -m xe_forge check "$f" --reference "$d/ref_pytorch.py" --spec "$d/spec.yaml" --device cpu 2>&1)"
rc=$?
mkdir -p redteam/red2/logs; echo "$out" > "redteam/red2/logs/$(echo "$f" | tr / _).log"
msg="$(echo "$out" | grep -E '^(PASSED|FAILED|REJECTED|UNVERIFIABLE|error|ERROR)' | head -1)"
[ -z "$msg" ] && msg="$(echo "$out" | tail -1)"
echo "$f|$rc|$msg"
