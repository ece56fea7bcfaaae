#!/usr/bin/env bash
# One device call of "all of KernelBench level 2, offline" (benchmarks/lower_level2_gpu.py), resumable.
# Carry the problems (.kb2/, files <id>_<Ops>.py), the wheel (.whl/) and, from the second call on, the
# previous call's files copied back into .l2state/:
#   run(command="bash benchmarks/gpu_level2.sh", carry=[".kb2", ".whl", ".l2state"], timeout_s=600)
# then copy files_at/* into .l2state/ and call again until table.md shows every problem reached.
# Knobs (env): DTYPES (bfloat16,float32), WORKERS (8), BUDGET (60 s of autotuning per lowering),
# VERIFY_S (380: phase A, lower + verify), DEADLINE_S (540: phase B, timing, ends by then), ONLY (ids).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" > "$OUT/env.txt"
RESUME=(); [ -d .l2state ] && RESUME=(--resume-from .l2state)
timeout -k 15 "$(( ${DEADLINE_S:-540} + 30 ))" python3 benchmarks/lower_level2_gpu.py "${PROBLEMS:-.kb2}" --out "$OUT" \
  "${RESUME[@]}" --dtypes "${DTYPES:-bfloat16,float32}" --workers "${WORKERS:-8}" --budget "${BUDGET:-60}" \
  --verify-deadline "${VERIFY_S:-380}" --deadline "${DEADLINE_S:-540}" ${ONLY:+--only "$ONLY"}
echo "exit $?"; ls -la "$OUT"
