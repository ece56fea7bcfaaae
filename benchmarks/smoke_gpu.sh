#!/usr/bin/env bash
# A few minutes on one GPU: the verifier at KernelBench shapes on a bf16 GEMM port and an fp32 port that
# keeps its conv in torch, then `bench --compile`. Carry .whl/ (benchmarks/README.md).
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD LITELLM_LOCAL_MODEL_COST_MAP=True PYTHONUNBUFFERED=1
for ex in 12_Gemm_Multiply_LeakyReLU 1_Conv2D_ReLU_BiasAdd; do
  timeout 120 python3 -m xe_forge check examples/$ex/kernel.py --variant bench-gpu 2>&1 | tail -25
done
timeout 100 python3 -m xe_forge bench examples/12_Gemm_Multiply_LeakyReLU/kernel.py --variant bench-gpu --compile 2>&1 | tail -15
