import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import pair, report
torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a45_sampled_cache", "76_Gemm_Add_ReLU", [8, 8, (8,)]); x = torch.randn(5, 8)
    report("a45 first call", ref(x), c(x))
    x2 = torch.randn(5, 8)
    report("a45 new input", ref(x2), c(x2))
    x3 = x2.clone(); x3[:, 1:] += 1.0
    report("a45 x[:, 1:] += 1 (first column unchanged)", ref(x3), c(x3))
