import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import pair, report
torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a51a_kcap8192_degenerate", "76_Gemm_Add_ReLU", [8300, 4, (4,)]); x = torch.randn(3, 8300)
    report("a51 K=8300", ref(x), c(x))
