#!/usr/bin/env bash
# Issue 25 in one device call (under 10 minutes on one H200): `check` wall time and phase_seconds at
# KernelBench shapes, the timer and the parent's clock on honest kernels and cheats (timing_gpu.py),
# then one default `optimize`. Carry .whl/ (benchmarks/README.md). Results under $OUT.
set -uo pipefail
# sections (default all): checks timing accept; CHECKS=gemm12,conv1 picks the checks, ACCEPT_ONLY=1,3 and
# ACCEPT_PARALLEL=1 the problems, RETIME_LOWERING=1 re-times the Triton-only lowering too, KDUMP=1 writes
# each profiled call's kernels with the ops that launched them (verify/kernel_list.py) under $OUT/kdump
SECTIONS=${*:-checks timing accept}  # and diag: benchmarks/diag_build.py
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
START=$(date +%s)
TOTAL=${TOTAL:-590}
left() { echo $(( ${1} < TOTAL - ($(date +%s) - START) ? ${1} : TOTAL - ($(date +%s) - START) )); }
python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
# this machine's torch ships without byte-code and cannot keep any: each process compiled ~1500 modules
# (5 s) until they were cached where it can write (a user's pip install keeps them beside the sources)
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pycache}
unset PYTHONDONTWRITEBYTECODE
python3 -m compileall -q -j 0 xe_forge /tmp/site > /dev/null  # as installed packages are
# torch, triton and sympy too (a profiled runner compiled 588 of their modules, 2.1 s, in the call's first check)
python3 -m compileall -q -j 0 $(python3 -c "import os, sympy, torch, triton; print(' '.join(os.path.dirname(m.__file__) for m in (torch, triton, sympy)))") > /dev/null 2>&1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
# outputs travel over CUDA IPC (verify/transport.py); where that fails here, the rest of the call uses files
python3 benchmarks/ipc_smoke.py > "$OUT/ipc.txt" 2>&1 || { tail -15 "$OUT/ipc.txt"; echo "IPC off for this call"; export XE_FORGE_OUTPUT_IPC=0; }
tail -2 "$OUT/ipc.txt"
want diag && python3 benchmarks/diag_build.py 2>&1 | grep -v Warn | tee "$OUT/diag.txt"
want checks && for case in "examples/12_Gemm_Multiply_LeakyReLU/kernel.py gemm12" \
            "examples/12_Gemm_Multiply_LeakyReLU/kernel.py gemm12_again" \
            "benchmarks/problems/check/gemm_residual/kernel.py gemm_residual" \
            "examples/1_Conv2D_ReLU_BiasAdd/kernel.py conv1" \
            "benchmarks/problems/check/fused_bn84/kernel.py fused_bn84 -r examples/84_Gemm_BatchNorm_Scaling_Softmax/kernel_pytorch.py -s examples/84_Gemm_BatchNorm_Scaling_Softmax/spec.yaml"; do
  set -- $case
  [[ -n "${CHECKS:-}" && ",$CHECKS," != *",$2,"* ]] && continue
  t0=$(date +%s.%N)
  mkdir -p "$OUT/prof/$2"  # every process of the check under cProfile (benchmarks/prof_top.py reads them)
  XE_FORGE_KERNEL_LIST_DUMP=${KDUMP:+$OUT/kdump/$2} XE_FORGE_WORKER_PROFILE="$OUT/prof/$2" timeout "$(left ${CHECK_LIMIT:-90})" python3 -m cProfile -o "$OUT/prof/$2/parent.prof" \
    -m xe_forge check "$1" "${@:3}" --variant bench-gpu --json > "$OUT/check_$2.json" 2> "$OUT/check_$2.err"
  rc=$?
  echo "check $2: rc=$rc wall=$(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
  python3 - "$OUT/check_$2.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no json:", e); sys.exit()
v = d.get("verdict", d)
print("  passed", v.get("passed"), "stage", v.get("stage_failed"), "seconds", v.get("seconds"))
print("  phases", {k: v for k, v in list(v.get("phase_seconds", {}).items())[:8]})
for f in v.get("findings", [])[:2]: print("  finding", f.get("check"), f.get("message", "")[:200])
PY
  python3 benchmarks/prof_top.py "$OUT/prof/$2" 9 > "$OUT/prof_$2.txt" 2>&1; head -c 2500 "$OUT/prof_$2.txt"
done
want timing && TIMING_DEADLINE=110 timeout "$(left 170)" python3 benchmarks/timing_gpu.py "$OUT/timing" 2>&1 | tee "$OUT/timing.log" | grep -v "^  " | tail -25
want timing && python3 - "$OUT/timing/timing.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no timing.json", e); sys.exit()
for r in d["honest"] + d["cheats"]:
    c = r.get("clock") or {}
    print(r.get("cheat", r.get("target")), "cand", r.get("cand_ms"), "base", r.get("base_ms"), "db",
          r.get("do_bench_cand_ms"), r.get("do_bench_base_ms"), "clock", c.get("verdict"), c.get("device_low_ms"),
          c.get("n"), c.get("pad"), "s", r.get("seconds"))
    if c:
        print("   walls null", [round(w, 1) for w in c.get("null_wall_ms", [])], "cand",
              [round(w, 1) for w in c.get("candidate_wall_ms", [])])
PY
A=$(left "${ACCEPT_TIME:-440}")  # the acceptance's share; no optimize starts in its last ACCEPT_TAIL seconds
want accept && timeout "$A" python3 benchmarks/accept_gpu.py "$OUT/accept" --parallel "${ACCEPT_PARALLEL:-3}" \
  --limit "${ACCEPT_LIMIT:-230}" --deadline $(( A - ${ACCEPT_TAIL:-200} )) --only "${ACCEPT_ONLY:-1,2,4,5,3,6}" ${RETIME_LOWERING:+--lowering} 2>&1 | tail -12
cd "$OUT" && tar czf results.tgz --exclude=results.tgz . 2>/dev/null
find "$OUT" -mindepth 1 -maxdepth 1 ! -name results.tgz ! -name timing.log ! -name gpu.txt -exec rm -rf {} +
ls -la "$OUT"
