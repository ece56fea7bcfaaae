import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import pair, report
torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a47_weight_drift", "76_Gemm_Add_ReLU", [4, 4, (4,)]); x = torch.randn(3, 4)
    for _ in range(10000):
        c(x)
    print("relative weight drift after 10^4 calls:", ((c.gemm.weight - ref.gemm.weight).abs() / ref.gemm.weight.abs()).max().item())
    report("a47 output after 10^4 calls", ref(x), c(x))
