#!/usr/bin/env bash
# One device call for issue 14: the rules engine on the 20 examples and the style variants, timed
# against eager PyTorch, torch.compile (max-autotune-no-cudagraphs) and cuBLAS (benchmarks/engine_gpu.py).
#   bash benchmarks/engine_gpu.sh [engine_gpu.py options]      e.g. --dtypes bf16 --only 12,76,s01
# Carry the wheels folder (.whl/, see README.md). Results land in $OUT (results.json, summary.md, engine.tgz).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,memory.used --format=csv > "$OUT/gpu.csv" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" | tee "$OUT/env.txt"
timeout -k 10 "${DEADLINE_HARD:-470}" python3 benchmarks/engine_gpu.py "$OUT" --deadline "${DEADLINE:-450}" "$@" 2>&1 | tail -80
echo "engine_gpu exit ${PIPESTATUS[0]}"
