#!/bin/bash
# Re-run every file of red team 4's corpus against the checkout's verifier (one at a time, niced):
#   bash redteam/red4/rerun.sh OUT.txt
# Each line: problem/file rc=0 (accepted) or rc=1 (rejected) and the verdict's first failure.
cd "$(dirname "$0")" || exit 1
out=${1:-rerun.txt}; : > "$out"
for f in */[ah][0-9]*.py; do
    p=${f%%/*}
    log=$(mktemp)
    nice -n 19 timeout 300 xe-forge check "$f" -r "$p/ref.py" --device cpu > "$log" 2>&1
    rc=$?
    echo "$f rc=$rc :: $(grep -E '^FAILED|^PASSED|PASSED \(' "$log" | head -1 | cut -c1-220)" >> "$out"
    rm -f "$log"
done
