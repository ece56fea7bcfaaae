#!/usr/bin/env bash
# One device call: install the carried wheels, then run the sections named on the command line.
#   bash benchmarks/gpu_run.sh verifier examples batch2 batch1
# Results are bundled into $OUT/results.tgz (the device tool brings back at most 8 files).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
FINAL_OUT=${OUT:-/tmp/out}; export OUT=/tmp/res; mkdir -p "$OUT" "$FINAL_OUT"
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,memory.used --format=csv > "$OUT/gpu.csv"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" | tee "$OUT/env.txt"
python3 benchmarks/make_problems.py /tmp/problems >/dev/null
# Bound the sections so the results are always bundled before the call's limit.
timeout -k 10 "${DEADLINE:-560}" bash benchmarks/gpu_sections.sh "$@"
echo "sections exit $?"
for b in batch1 batch2; do [ -d /tmp/$b ] && cp /tmp/$b/batch.sqlite "$OUT/$b.sqlite" 2>/dev/null; [ -f /tmp/$b/summary.md ] && cp /tmp/$b/summary.md "$OUT/$b.md"; done
tar czf "$FINAL_OUT/results.tgz" -C /tmp res
