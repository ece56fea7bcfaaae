"""Proofs for attacks that passed. Run: TRITON_INTERPRET=1 python prove.py NAME"""
import importlib.util, sys, os
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
import triton

HERE = "/work/red7"
EX = "/work/wt-red7/examples"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def pair(att, ex, init):
    cand = load(f"{HERE}/{att}.py", att)
    ref = load(f"{EX}/{ex}/kernel_pytorch.py", "ref_" + att)
    torch.manual_seed(0)
    r = ref.Model(*init)
    c = cand.Model(*init)
    c.load_state_dict(r.state_dict())
    return cand, r, c


def report(name, got, want):
    err = (got - want).abs().max().item()
    ok = torch.allclose(got, want, atol=1e-4, rtol=1e-4, equal_nan=True)
    print(f"{name}: max|diff|={err:.3g} allclose={ok}")
    return ok


def gemm76(att, M=13, K=72, N=80):
    return pair(att, "76_Gemm_Add_ReLU", [K, N, (N,)])


name = sys.argv[1]
torch.manual_seed(1)
if name in ("a01_constexpr_callback", "a04_constexpr_default", "a05_global_constexpr", "a10_tuple_constexpr", "a48_tltuple_fn", "a02_autotune_config_fn", "a03_heuristics_fn", "a02b_autotune_config_constexpr", "a03b_heuristics_constexpr", "a91_global_instance_method", "a92_global_dict_callee"):
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72)
    report(name + " as written", c(x), r(x))
    # the host function does the whole GEMM: make it a no-op and the output is relu(bias) alone
    calls = []
    def fake(acc, a, b):
        calls.append(1)
        return acc
    orig = cand.tile_dot
    cand.tile_dot = fake
    if name == "a02b_autotune_config_constexpr":
        cand._mm_relu.configs[0].kwargs["FN"].value = fake
    if hasattr(cand, "TABLE"):
        cand.TABLE["dot"] = fake
    if hasattr(cand, "HELPER"):
        cand.HELPER.value = fake
    out = c(x)
    print(f"{name}: host tile_dot called {len(calls)} times; with it a no-op, output == relu(bias): "
          f"{torch.allclose(out, torch.relu(r.bias).expand_as(out))}  (no tl.dot in the kernel)")
elif name in ("a46_triton_namespace_numpy", "a47_softmax_triton_np"):
    import triton.runtime.interpreter as I
    real_np = I.np
    counts = {}
    class Spy:
        def __getattr__(self, k):
            f = getattr(real_np, k)
            if k in ("matmul", "exp", "sum", "max"):
                def g(*a, **kw):
                    counts[k] = counts.get(k, 0) + 1
                    return f(*a, **kw)
                return g
            return f
    if name == "a46_triton_namespace_numpy":
        cand, r, c = gemm76(name)
        x = torch.rand(13, 72)
    else:
        cand, r, c = pair(name, "99_Matmul_GELU_Softmax", [72, 80])
        x = torch.rand(13, 72)
    report(name + " as written", c(x), r(x))
    I.np = Spy()
    try:
        c(x)
    finally:
        I.np = real_np
    print(f"{name}: numpy calls made from inside the jit body via triton.runtime.interpreter.np: {counts}")
elif name == "a07_softmax_callback":
    cand, r, c = pair(name, "99_Matmul_GELU_Softmax", [72, 80])
    x = torch.rand(13, 72)
    report(name + " as written", c(x), r(x))
    cand.row_softmax = lambda g: g
    out = c(x)
    print(f"{name}: with the host callback a no-op the output is the raw GELU (not a softmax): row sums {out.sum(1)[:3].tolist()}")
elif name == "a06_train_only":
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72)
    c.eval(); r.eval()
    report(name + " in eval()", c(x), r(x))
elif name == "a08_call_count":
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72)
    c.calls = 600  # equivalent to 600 earlier calls
    report(name + " call 601", c(x), r(x))
elif name == "a09_size_cap":
    cand, r, c = pair(name, "76_Gemm_Add_ReLU", [8, 1000, (1000,)])
    x = torch.rand(1100, 8)
    report(name + " M=1100 N=1000", c(x), r(x))
elif name == "a16_batch1":
    cand, r, c = gemm76(name)
    x = torch.rand(1, 72)
    report(name + " M=1", c(x), r(x))
elif name == "a17_shape_combo":
    cand, r, c = pair(name, "76_Gemm_Add_ReLU", [8, 1001, (1001,)])
    x = torch.rand(65, 8)
    report(name + " M=65 N=1001", c(x), r(x))
elif name == "a30_nan_scrub":
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72); x[0, 0] = float("nan")
    got, want = c(x), r(x)
    print(f"{name}: NaN in row 0: ref row0 all NaN={want[0].isnan().all().item()}, kernel row0 NaN count={got[0].isnan().sum().item()}")
elif name == "a31_fp32_only":
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72, dtype=torch.float64)
    c.double(); r.double()
    report(name + " float64", c(x), r(x))
elif name in ("a11_weight_blind_cache", "a94_value_cache_host_channel"):
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72)
    report(name + " call 1", c(x), r(x))
    with torch.no_grad():  # an optimizer step: weights change in place
        r.gemm.weight.add_(0.1); c.gemm.weight.add_(0.1)
    report(name + " same x after a weight update", c(x), r(x))
    if name == "a94_value_cache_host_channel":
        print(f"{name}: host Python holds input-derived values: FP={cand.FP} (sum of x^2 = {(x*x).sum().item():.6g})")
elif name == "a38_wrong_backward":
    cand, r, c = gemm76(name)
    x1 = torch.rand(13, 72, requires_grad=True); x2 = x1.detach().clone().requires_grad_(True)
    report(name + " forward", c(x1).detach(), r(x2).detach())
    c(x1).sum().backward(); r(x2).sum().backward()
    report(name + " d/dx", x1.grad, x2.grad)
    report(name + " d/dW", c.gemm.weight.grad if c.gemm.weight.grad is not None else torch.zeros_like(r.gemm.weight), r.gemm.weight.grad)
elif name == "a20_softmax_flush":
    cand, r, c = pair(name, "99_Matmul_GELU_Softmax", [72, 2000])
    x = torch.randn(13, 72) * 3
    got, want = c(x), r(x)
    lost = (1 - got.sum(1)).abs().max().item()
    zeroed = ((got == 0) & (want > 0)).sum().item()
    print(f"{name}: {zeroed} positive probabilities flushed to 0; worst row loses {lost:.3g} of its probability mass; "
          f"max rel err on flushed = 1.0; allclose(rtol=1e-4, atol=1e-6)={torch.allclose(got, want, rtol=1e-4, atol=1e-6)}")
elif name == "a53_groupnorm_onepass":
    cand, r, c = pair(name, "30_Gemm_GroupNorm_Hardtanh", [72, 80, 4, -2.0, 2.0])
    x = torch.rand(13, 72)
    report(name + " problem inputs", c(x), r(x))
    # a valid model state: a large per-feature bias (GEMM output offset ~3e3) with the default weights
    with torch.no_grad():
        for m in (r, c):
            m.gemm.bias.fill_(3000.0)
    report(name + " GEMM bias 3000 (offset rows)", c(x), r(x))
    x2 = torch.rand(13, 72) + 500.0  # or: inputs offset by 500, default weights
    with torch.no_grad():
        for m in (r, c):
            m.gemm.bias.zero_()
    report(name + " inputs offset by 500", c(x2), r(x2))
elif name == "a46b_triton_typing_sys_numpy":
    import sys as _s
    real_np = _s.modules["numpy"]
    counts = {}
    class Spy:
        def __getattr__(self, k):
            f = getattr(real_np, k)
            if k == "matmul":
                def g(*a, **kw):
                    counts[k] = counts.get(k, 0) + 1
                    return f(*a, **kw)
                return g
            return f
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72)
    report(name + " as written", c(x), r(x))
    _s.modules["numpy"] = Spy()
    try:
        c(x)
    finally:
        _s.modules["numpy"] = real_np
    print(f"{name}: numpy.matmul calls made from inside the jit body via triton.language.core.typing.sys.modules: {counts} (the kernel has no tl.dot)")
elif name == "a99_detect_harness_sysmodules":
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72)
    print("xe_forge loaded:", "xe_forge" in sys.modules)
    report(name + " in a user process (no xe_forge)", c(x), r(x))
    sys.modules["xe_forge"] = object()
    report(name + " with xe_forge in sys.modules (as in the checker)", c(x), r(x))
elif name == "a108_real_launch_counter":
    cand, r, c = gemm76(name)
    x = torch.rand(13, 72)
    report(name + " first call", c(x), r(x))
    for _ in range(520):
        c(x)
    print("executed programs counted:", len(cand.REAL))
    report(name + " after 520 production calls", c(x), r(x))
elif name == "a120_bn_momentum_baked":
    ref_init = load(f"{EX}/41_Gemm_BatchNorm_GELU_ReLU/kernel_pytorch.py", "ri").get_init_inputs()
    cand, r, c = pair(name, "41_Gemm_BatchNorm_GELU_ReLU", [72, 80] + list(ref_init[2:]))
    for m in (r, c):
        m.batch_norm.momentum = 0.5
    x = torch.rand(13, 72)
    report(name + " output", c(x), r(x))
    report(name + " running_mean with momentum=0.5", c.batch_norm.running_mean, r.batch_norm.running_mean)
elif name == "a125_exact_zero_inputs":
    cand, r, c = gemm76(name)
    x = torch.relu(torch.randn(13, 72))  # e.g. the previous layer's ReLU output: half exact zeros
    report(name + " x = relu(randn)", c(x), r(x))
elif name == "a133_gelu_tanh_approx":
    cand, r, c = pair(name, "67_Conv2d_GELU_GlobalAvgPool", [3, 8, 3])
    x = torch.randn(2, 3, 12, 13) * 3
    got, want = c(x), r(x)
    report(name + " x = 3*randn", got, want)
    print("max relative error:", ((got - want).abs() / want.abs()).max().item())
elif name == "a147_exact_zero_weights":
    cand, r, c = gemm76(name)
    with torch.no_grad():
        for m in (r, c):
            m.gemm.weight[:, ::2] = 0.0  # a 50%-pruned weight
    x = torch.rand(13, 72)
    report(name + " pruned W", c(x), r(x))
elif name == "a86_lazy_prepack":
    cand, r, c = pair(name, "14_Gemm_Divide_Sum_Scaling", [72, 80, 1.5])
    x = torch.rand(13, 72)
    report(name + " call 1", c(x), r(x))
    with torch.no_grad():
        r.weight.mul_(-1.0); c.weight.mul_(-1.0)
    report(name + " after an in-place weight update", c(x), r(x))
else:
    print("no proof for", name)
