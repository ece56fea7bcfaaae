"""Production misuse the verifier never exercises (run with TRITON_INTERPRET=1)."""
import importlib.util, torch

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

ref = load("/work/red4/ew/ref.py", "ref")
torch.manual_seed(0)
# a02: input refilled in place without a version bump (x.data.copy_, as a static input buffer / DataLoader pin buffer is)
m = load("/work/red4/ew/a02_memo_version.py", "a02").ModelNew(48); r = ref.Model(48); r.load_state_dict(m.state_dict())
x = torch.randn(16, 48); m(x); x.data.copy_(torch.randn(16, 48))
print("a02 memo keyed on _version, x.data refilled: max err", (m(x) - r(x)).abs().max().item())
# a03: weights updated through .data (EMA / old optimizers)
m = load("/work/red4/ew/a03_weight_cache_version.py", "a03").ModelNew(48); r = ref.Model(48)
x = torch.randn(16, 48); m(x); m.bias.data.add_(1.0); r.load_state_dict(m.state_dict())
print("a03 weight cache keyed on _version, bias.data updated: max err", (m(x) - r(x)).abs().max().item())
# a12b: a benchmark harness that seeds with 42
torch.manual_seed(42)
m = load("/work/red4/ew/a12b_initial_seed_init.py", "a12b").ModelNew(48); r = ref.Model(48); r.load_state_dict(m.state_dict())
x = torch.randn(16, 48)
print("a12b under torch.manual_seed(42): max err", (m(x) - r(x)).abs().max().item())
# a15: batch-permuted input
m = load("/work/red4/ew3/a15_layout_batch_permuted.py", "a15").ModelNew(40); r3 = load("/work/red4/ew3/ref.py", "ref3").Model(40); r3.load_state_dict(m.state_dict())
x = torch.randn(6, 4, 40).transpose(0, 1)
print("a15 x = y.transpose(0, 1): max err", (m(x) - r3(x)).abs().max().item())
# a10: NaN input
m = load("/work/red4/ew/a10_nan_relu.py", "a10").ModelNew(48); r = ref.Model(48); r.load_state_dict(m.state_dict())
x = torch.randn(16, 48); x[0, 0] = float("nan")
print("a10 NaN input: kernel", m(x)[0, 0].item(), "reference", r(x)[0, 0].item())
# a14: another group count
g = load("/work/red4/gn/a14_groupnorm_fixed_groups.py", "a14").ModelNew(2, 8); rg = load("/work/red4/gn/ref.py", "refg").Model(2, 8); rg.load_state_dict(g.state_dict())
x = torch.randn(3, 8, 19)
print("a14 GroupNorm(2, 8): max err", (g(x) - rg(x)).abs().max().item())
# a13: a caller keeping outputs over an epoch
m = load("/work/red4/ew/a13_ring_outputs.py", "a13").ModelNew(48)
x0 = torch.randn(4, 48); y0 = m(x0); keep = y0.clone()
for _ in range(1300): m(torch.randn(4, 48))
print("a13 first output after 1300 more calls changed by", (y0 - keep).abs().max().item())
# a21b: real-launch counting: wrong from the 26th call in production
m = load("/work/red4/ew/a21b_real_launch_count_25.py", "a21b").ModelNew(48); r = ref.Model(48); r.load_state_dict(m.state_dict())
x = torch.randn(16, 48)
errs = [(m(x) - r(x)).abs().max().item() for _ in range(30)]
print("a21b errors per call 1..30:", [round(e, 2) for e in errs])
