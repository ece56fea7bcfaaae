"""a29: one-pass variance breaks on groups with a large common offset (a trained bias of 1e3, small activations)."""
import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import pair, report
torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a29_onepass_var30", "30_Gemm_GroupNorm_Hardtanh", [8, 32, 4, -2.0, 2.0])
    ref.gemm.bias.fill_(1000.0); c.gemm.bias.fill_(1000.0)
    x = torch.randn(5, 8) * 0.05
    report("a29 bias=1000, x~0.05*N(0,1)", ref(x), c(x))
