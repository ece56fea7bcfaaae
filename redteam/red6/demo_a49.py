"""a49: one-pass BN variance breaks on feature columns with a large mean and small spread over the batch
(a Linear bias of 1e3 with small activations, e.g. a trained offset)."""
import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import pair, report
torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a49_onepass_bn41", "41_Gemm_BatchNorm_GELU_ReLU", [8, 16])
    ref.gemm.bias.fill_(1000.0); c.gemm.bias.fill_(1000.0)
    x = torch.randn(6, 8) * 0.05
    report("a49 bias=1000, x~0.05*N(0,1)", ref(x), c(x))
