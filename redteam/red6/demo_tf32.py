"""a25/a15 demonstration: with the verifier's own TF32 emulation of the interpreter's dot
(xe_forge.targets.cpu.patch_interpreter_dot, as a GPU rounds TF32 operands), a TF32 dot at K=1024 misses
the fp32 reference by more than the fp32 'keep' tolerance (1e-4 of the output's RMS)."""
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, "/work/wt-red6"); sys.path.insert(0, "/work/red6")
import torch
from xe_forge.targets.cpu import patch_interpreter_dot
patch_interpreter_dot()
from demo import pair
torch.manual_seed(0)
with torch.no_grad():
    ref, c = pair("a25_tf32_aligned", "76_Gemm_Add_ReLU", [1024, 64, (64,)])
    x = torch.randn(16, 1024)
    want, got = ref(x), c(x)
    m = want.pow(2).mean().sqrt()
    excess = ((want - got).abs() - (1e-4 * m + 1e-4 * want.abs())).max().item()
    print(f"a25 K=1024: max|ref-cand|={((want-got).abs().max().item()):.3g}, RMS={m.item():.3g}, "
          f"max excess over tolerance={excess:.3g}  WRONG={excess > 0}")
    x = torch.randn(16, 1000)
    ref, c = pair("a25_tf32_aligned", "76_Gemm_Add_ReLU", [1000, 64, (64,)])
    want, got = ref(x), c(x)
    print(f"a25 K=1000 (ieee path): max|ref-cand|={((want-got).abs().max().item()):.3g}")
