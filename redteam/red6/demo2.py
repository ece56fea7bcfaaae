"""More demonstrations (TRITON_INTERPRET=1). Usage: python demo2.py NAME..."""
import os, sys
os.environ.setdefault("TRITON_INTERPRET", "1")
import torch
sys.path.insert(0, "/work/red6")
from demo import load, pair, report, EX


class Identity:  # stands in for a host-side constexpr helper: shows the Triton part alone is wrong
    def __init__(self, *a):
        pass

    def mac(self, *a):
        pass


def run(name):
    torch.manual_seed(0)
    with torch.no_grad():
        if name == "a16_plane_cap67":
            ref, c = pair(name, "67_Conv2d_GELU_GlobalAvgPool", [1, 2, 3]); x = torch.rand(1, 1, 200, 200)
            report(name + " plane 198x198", ref(x), c(x))
        elif name == "a18_output_ring":
            ref, c = pair(name, "76_Gemm_Add_ReLU", [4, 4, (4,)]); x1 = torch.randn(2, 4)
            y1 = c(x1); want = ref(x1)
            for _ in range(1100):
                c(torch.randn(2, 4))
            report(name + " y1 after 1100 more calls", want, y1)
        elif name == "a20_layout_set":
            ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); xb = torch.randn(5, 24); x = xb[:, ::3]
            report(name + " x[:, ::3]", ref(x), c(x))
        elif name == "a24_bn_eval_ignored":
            ref, c = pair(name, "41_Gemm_BatchNorm_GELU_ReLU", [8, 16]); x = torch.randn(6, 8)
            for _ in range(3):
                xx = torch.randn(6, 8); ref(xx); c(xx)
            ref.eval(); c.eval()
            report(name + " eval()", ref(x), c(x))
        elif name == "a25_tf32_aligned":
            ref, c = pair(name, "76_Gemm_Add_ReLU", [1024, 64, (64,)]); x = torch.randn(4, 1024)
            want64 = ref.double()(x.double()).float(); ref.float()
            report(name + " K=1024 vs fp32 ref", ref(x), c(x))
        elif name == "a36_defaults_baked62":
            ref = load(EX + "62_Matmul_GroupNorm_LeakyReLU_Sum/kernel_pytorch.py", "r62").Model(8, 12, 3, 0.5, 0.2)
            c = load("/work/red6/a/a36_defaults_baked62.py", "a36").Model(8, 12, 3, 0.5, 0.2)
            c.load_state_dict(ref.state_dict()); x = torch.randn(4, 8)
            report(name + " eps=0.5 slope=0.2", ref(x), c(x))
        elif name == "a38_first_shape_plan":
            ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); c(torch.randn(4, 8)); x = torch.randn(40, 8)
            report(name + " M=4 then M=40", ref(x), c(x))
        elif name in ("a22b_constexpr_class_numpy", "a22c_constexpr_class_gemm", "a22d_constexpr_instance_method"):
            ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); x = torch.randn(5, 8)
            report(name + " as written", ref(x), c(x))
            c.act = Identity if name != "a22d_constexpr_instance_method" else Identity()
            report(name + " host helper replaced by a no-op (Triton part alone)", ref(x), c(x))
        elif name == "a22e_constexpr_tuple_fn":
            ref, c = pair(name, "76_Gemm_Add_ReLU", [8, 8, (8,)]); x = torch.randn(5, 8)
            report(name + " as written", ref(x), c(x))
            mod = sys.modules[name]; mod._host_relu = lambda t: t
            report(name + " host helper replaced by a no-op (Triton part alone)", ref(x), c(x))


if __name__ == "__main__":
    for n in sys.argv[1:]:
        run(n)
