#!/usr/bin/env bash
# One device call (under 8 minutes, one H200): issue 15's GPU checks.
#  1. `xe-forge check` at bench-gpu on examples 12 (GEMM) and 1 (conv): wall seconds, against the default
#     --timeout of 120 s (a compile-and-run should take seconds).
#  2. `xe-forge optimize` (rules engine, stages dtype + autotuning) on example 12 at bench-gpu: report.json
#     must carry the final kernel's timings vs the input kernel, eager PyTorch and torch.compile.
# Writes under $OUT: summary.md, times.txt, report.json, report.md, report.html, optimize_stderr.txt.
#   bash benchmarks/ux_gpu.sh
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
for e in 12_Gemm_Multiply_LeakyReLU 1_Conv2D_ReLU_BiasAdd; do
  start=$(date +%s.%N)
  timeout -k 5 200 python3 -m xe_forge check "examples/$e/kernel.py" --variant bench-gpu > "/tmp/check_$e.txt" 2>&1
  rc=$?
  echo "$e check --variant bench-gpu: exit $rc, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" >> "$OUT/times.txt"
  tail -3 "/tmp/check_$e.txt" >> "$OUT/times.txt"
done
start=$(date +%s.%N)
timeout -k 10 "${DEADLINE:-330}" python3 -m xe_forge optimize examples/12_Gemm_Multiply_LeakyReLU/kernel.py \
  --variant bench-gpu --engine rules --stages dtype,autotuning --max-iters 2 --run-dir /tmp/runs \
  > /tmp/optimize_stdout.txt 2> "$OUT/optimize_stderr.txt"
echo "optimize: exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" >> "$OUT/times.txt"
run=$(ls -d /tmp/runs/*/ 2>/dev/null | head -1)
[ -n "$run" ] && cp "$run/report.json" "$run/report.md" "$run/report.html" "$OUT/" 2>/dev/null
python3 - "$OUT" <<'PY' > "$OUT/summary.md"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
print("# issue 15 on the GPU\n")
print((out / "times.txt").read_text() if (out / "times.txt").exists() else "no times")
report = out / "report.json"
if not report.exists():
    print("no report.json: see optimize_stderr.txt")
    sys.exit()
r = json.loads(report.read_text())
print(f"\nheadline: {r['headline']}\nnot checked: {[s['what'] for s in r['not_checked']]}")
for name, t in r["timings"].items():
    print(f"- vs {name}: {t['speedup']:.3f}x ({t['candidate_ms']:.4f} ms vs {t['baseline_ms']:.4f} ms, "
          f"margin {t['margin']:.1%}, faster={t['faster']}, reps={t['reps']})")
missing = {"input kernel", "eager", "torch.compile"} - set(r["timings"])
print(f"\nmissing baselines: {sorted(missing) or 'none'}")
PY
cat "$OUT/summary.md"
