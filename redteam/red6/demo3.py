"""Demonstrations for a40-a42 (TRITON_INTERPRET=1)."""
import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import pair, report

torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a40_bf16_path", "76_Gemm_Add_ReLU", [8, 8, (8,)])
    ref = ref.to(torch.bfloat16); c = c.to(torch.bfloat16)
    x = torch.randn(5, 8, dtype=torch.bfloat16)
    report("a40_bf16_path bf16 (tolerance 1e-2 applies; see max error)", ref(x).float(), c(x).float())
    ref, c = pair("a41_gemv_m1", "76_Gemm_Add_ReLU", [8, 8, (8,)]); x = torch.randn(1, 8)
    report("a41_gemv_m1 batch 1", ref(x), c(x))
    ref, c = pair("a42_channels_last1", "1_Conv2D_ReLU_BiasAdd", [3, 8, 3, (8, 1, 1)])
    x = torch.rand(2, 3, 12, 13).to(memory_format=torch.channels_last)
    print("conv output channels_last:", ref.conv(x).is_contiguous(memory_format=torch.channels_last))
    report("a42_channels_last1 channels_last input", ref(x), c(x))
