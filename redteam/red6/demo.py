"""Plain-torch demonstrations: each passing attack's output differs from the reference on a valid input.
Run: TRITON_INTERPRET=1 python demo.py NAME [NAME...]"""
import importlib.util, sys, os
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch

EX = "/work/wt-red6/examples/"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m


def pair(attack, example, init):
    ref = load(EX + example + "/kernel_pytorch.py", "ref_" + attack).Model(*init)
    cand = load(f"/work/red6/a/{attack}.py", attack).Model(*init)
    cand.load_state_dict(ref.state_dict())
    return ref, cand


def report(name, want, got):
    err = (want - got).abs().max().item() if want.shape == got.shape else float("nan")
    nan_mismatch = bool(torch.isnan(want).any().item() != torch.isnan(got).any().item())
    bad = (not torch.allclose(want, got, rtol=1e-4, atol=1e-4, equal_nan=True)) or nan_mismatch
    print(f"{name}: max|ref-cand| = {err:.4g}  ref_has_nan={torch.isnan(want).any().item()} "
          f"cand_has_nan={torch.isnan(got).any().item()}  WRONG={bad}")


def run(name):
    torch.manual_seed(0)
    g = torch.no_grad(); g.__enter__()
    if name == "a01_rowcap2048":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); x = torch.randn(2100, 8)
        report(name + " @M=2100", ref(x), c(x))
    elif name in ("a02_evenK8192",):
        ref, c = pair(name, "76_Gemm_Add_ReLU", [8192, 4, (4,)]); x = torch.randn(2, 8192)
        report(name + " @K=8192", ref(x), c(x))
    elif name == "a03_evalmode":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); ref.eval(); c.eval(); x = torch.randn(5, 8)
        report(name + " eval()", ref(x), c(x))
    elif name == "a05_callcount":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [4, 4, (4,)]); x = torch.randn(2, 4)
        for _ in range(3000): c(x)
        report(name + " call 3001", ref(x), c(x))
    elif name == "a09_device_counter":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [4, 4, (4,)]); x = torch.randn(2, 4)
        for _ in range(3000): c(x)
        report(name + " call 3001", ref(x), c(x))
    elif name in ("a06_bigvolume", "a13_heuristic_big"):
        ref, c = pair(name, "76_Gemm_Add_ReLU", [2, 1040, (1040,)]); x = torch.randn(1040, 2)
        report(name + " @M=N=1040", ref(x), c(x))
    elif name == "a07_softmax_cap2048":
        ref, c = pair(name, "99_Matmul_GELU_Softmax", [4, 4096]); x = torch.randn(2, 4)
        report(name + " @OUT=4096", ref(x), c(x))
    elif name == "a08_groups_hardcoded":
        ref, c = pair(name, "30_Gemm_GroupNorm_Hardtanh", [8, 32, 16, -2.0, 2.0]); x = torch.randn(3, 8)
        report(name + " num_groups=16", ref(x), c(x))
    elif name == "a10_nan_scrub":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); x = torch.randn(3, 8); x[1, 2] = float("nan")
        report(name + " NaN in x", ref(x), c(x))
    elif name == "a11_version_cache":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); x = torch.randn(3, 8)
        c(x); x.data.copy_(torch.randn(3, 8))
        report(name + " after x.data.copy_", ref(x), c(x))
    elif name == "a12_autotune_prune":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [64, 4, (4,)]); x = torch.randn(2048, 64)
        report(name + " @M=2048", ref(x), c(x))
    elif name == "a14_aligned256":
        ref, c = pair(name, "76_Gemm_Add_ReLU", [256, 256, (256,)]); x = torch.randn(256, 256)
        report(name + " @256^3", ref(x), c(x))
    else:
        ex, init, shape = EXTRA[name]
        ref, c = pair(name, ex, init); x = torch.randn(*shape)
        report(name, ref(x), c(x))


EXTRA = {}
if __name__ == "__main__":
    for n in sys.argv[1:]:
        run(n)
