#!/usr/bin/env bash
# One device call: lower every KernelBench level-2 problem with TorchInductor (Triton-only templates),
# bf16 then fp32, and probe Nsight Compute. Needs the problems carried in .kb2/ (see README.md).
#   bash benchmarks/gpu_lower.sh            # results under $OUT
set -uo pipefail
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())" | tee "$OUT/env.txt"
nproc >> "$OUT/env.txt"
( ncu --version; timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
    python3 -c "import torch; x=torch.ones(1<<20,device='cuda'); print((x*2).sum().item())" ) > "$OUT/ncu_probe.txt" 2>&1
timeout -k 10 "${BF16_S:-330}" python3 benchmarks/lower_dump.py .kb2 /tmp/bf16.jsonl --dtype bfloat16 --workers "${WORKERS:-12}" --deadline "$(( ${BF16_S:-330} - 20 ))"
timeout -k 10 "${FP32_S:-200}" python3 benchmarks/lower_dump.py .kb2 /tmp/fp32.jsonl --dtype float32 --workers "${WORKERS:-12}" --deadline "$(( ${FP32_S:-200} - 20 ))"
for d in bf16 fp32; do [ -f /tmp/$d.jsonl ] && gzip -c /tmp/$d.jsonl > "$OUT/lower_$d.jsonl.gz"; done
ls -la "$OUT"
