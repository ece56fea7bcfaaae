#!/usr/bin/env bash
# One device call (under 6 minutes): issue 18's profiler run. Installs the carried wheels (.whl/, see
# README.md), puts ncu on PATH, probes it, then benchmarks/profile_gpu.py writes under $OUT:
# summary.md, records.json, roofline_<id>.png (4), profiles.tgz, ncu_probe.txt (8 files at most).
#   bash benchmarks/profile_gpu.sh [IDS...]        # default 12 30 76 99; one lane per visible GPU
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] && export PATH="$(dirname "$NCU"):$PATH"
( ncu --version; nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem --format=csv ) > "$OUT/ncu_probe.txt" 2>&1
timeout -k 10 "${DEADLINE_OUTER:-345}" python3 benchmarks/profile_gpu.py "$OUT" "$@"
echo "profile_gpu exit $?"
