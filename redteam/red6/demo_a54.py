import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
import torch.nn as nn
sys.path.insert(0, "/work/red6")
from demo import pair, report
torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a54_weight_strides", "76_Gemm_Add_ReLU", [8, 6, (6,)])
    for m in (ref, c):  # a transposed (tied-style) weight: same values, column-major storage
        m.gemm.weight = nn.Parameter(ref.gemm.weight.detach().t().contiguous().t())
    x = torch.randn(4, 8)
    print("weight strides:", c.gemm.weight.stride())
    report("a54 transposed-storage weight", ref(x), c(x))
