#!/usr/bin/env bash
# The sections of a device call (see gpu_run.sh, which bounds this script's time).
set -uo pipefail
XF="python3 -m xe_forge"
for section in "$@"; do
  start=$(date +%s)
  case "$section" in
    verifier) CUDA_VISIBLE_DEVICES=0 python3 benchmarks/verifier_gpu.py "$OUT" 2>&1 | tail -40 ;;
    examples) CUDA_VISIBLE_DEVICES=0 python3 benchmarks/examples_gpu.py "$OUT/examples.json" 1 4 12 14 17 18 29 30 37 41 > "$OUT/examples_a.log" 2>&1 &
              CUDA_VISIBLE_DEVICES=1 python3 benchmarks/examples_gpu.py "$OUT/examples_b.json" 45 62 64 67 76 80 81 84 95 99 > "$OUT/examples_b.log" 2>&1 &
              wait; tail -3 "$OUT/examples_a.log" "$OUT/examples_b.log" ;;
    batch2)   $XF batch /tmp/problems --engine rules --variant bench-gpu --workers 2 --out /tmp/batch2 \
                --max-iters ${MAX_ITERS:-2} --time-limit-per-problem ${LIMIT:-240} ${ONLY:+--only $ONLY} \
                --export-trajectories "$OUT/trajectories2.jsonl" > "$OUT/batch2.log" 2>&1
              cp /tmp/batch2/summary.json "$OUT/batch2_summary.json"; cp /tmp/batch2/report.html "$OUT/batch2_report.html"
              tail -30 "$OUT/batch2.log" ;;
    batch1)   CUDA_VISIBLE_DEVICES=0 $XF batch /tmp/problems --engine rules --variant bench-gpu --workers 1 --out /tmp/batch1 \
                --max-iters ${MAX_ITERS:-2} --time-limit-per-problem ${LIMIT:-240} ${ONLY1:+--only $ONLY1} > "$OUT/batch1.log" 2>&1
              cp /tmp/batch1/summary.json "$OUT/batch1_summary.json"; tail -30 "$OUT/batch1.log" ;;
  esac
  echo "== $section took $(( $(date +%s) - start )) s" | tee -a "$OUT/sections.txt"
done
