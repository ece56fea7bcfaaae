import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import load, report, EX
torch.manual_seed(1234)  # an ordinary script seed
with torch.no_grad():
    ref = load(EX + "76_Gemm_Add_ReLU/kernel_pytorch.py", "r76").Model(8, 8, (8,))
    c = load("/work/red6/a/a53b_seed_sniff_init.py", "a53b").Model(8, 8, (8,))
    c.load_state_dict(ref.state_dict()); x = torch.randn(4, 8)
    report("a53b after torch.manual_seed(1234)", ref(x), c(x))
