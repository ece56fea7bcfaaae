"""Convolution seeds written six ways, and what the rules engine does with each.

The conv-implicit-gemm recipe must apply wherever forward leaves a convolution to torch (a module
call, the functional form with its own parameters, Conv3d with groups) and give a precise reason
where it does not (the convolution is already a Triton kernel, a non-zero padding mode, a call the
recipe cannot see). Every candidate it makes goes through the verifier against the PyTorch
reference under the interpreter; the other recipes of the stages a conv seed meets are listed with
their outcome too.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from xe_forge.kb import load_kb
from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.rules import propose_rules
from xe_forge.targets.base import Toolchain
from xe_forge.verify.evaluate import Evaluator, input_allowance

HEADER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _epilogue_kernel(y_ptr, b_ptr, out_ptr, n, inner, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + (offs // inner) % C, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(y + b, 0.0), mask=mask)


def _epilogue(y, extra_bias):
    out = torch.empty_like(y)
    n = y.numel()
    inner = y[0, 0].numel()
    _epilogue_kernel[(triton.cdiv(n, 256),)](y, extra_bias, out, n, inner, y.shape[1], BLOCK=256)
    return out
"""

SEEDS = {
    # cuDNN convolution through the module, Triton epilogue (the examples' style)
    "module": ("""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.extra = nn.Parameter(torch.randn(8))

    def forward(self, x):
        return _epilogue(self.conv(x), self.extra)
""", "torch.relu(self.conv(x) + self.extra.view(1, -1, 1, 1))", "applies"),
    # the functional form with the model's own parameters, strided, keyword arguments
    "functional": ("""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 4, 3, 3) * 0.2)
        self.bias = nn.Parameter(torch.randn(6))
        self.extra = nn.Parameter(torch.randn(6))

    def forward(self, x):
        y = F.conv2d(x, self.weight, self.bias, stride=2, padding=1)
        return _epilogue(y, self.extra)
""", "torch.relu(F.conv2d(x, self.weight, self.bias, stride=2, padding=1) + self.extra.view(1, -1, 1, 1))",
        "applies"),
    # Conv3d with groups and dilation, through the module
    "conv3d_groups": ("""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv3d = nn.Conv3d(4, 6, (2, 3, 3), groups=2, dilation=(1, 2, 1), bias=False)
        self.extra = nn.Parameter(torch.randn(6))

    def forward(self, x):
        y = self.conv3d(x)
        return _epilogue(y, self.extra)
""", "torch.relu(self.conv3d(x) + self.extra.view(1, -1, 1, 1, 1))", "applies"),
    # the convolution is already a (direct, scalar-loop) Triton kernel
    "direct_triton": ("""
@triton.jit
def _direct_conv_kernel(x_ptr, w_ptr, y_ptr, n, C, H, W, OC, OH, OW, KH: tl.constexpr, KW: tl.constexpr,
                        BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ow = offs % OW
    oh = (offs // OW) % OH
    oc = (offs // (OW * OH)) % OC
    b = offs // (OW * OH * OC)
    acc = tl.zeros([BLOCK], tl.float32)
    for c in range(C):
        for kh in range(KH):
            for kw in range(KW):
                xv = tl.load(x_ptr + ((b * C + c) * H + oh + kh) * W + ow + kw, mask=mask, other=0.0)
                wv = tl.load(w_ptr + ((oc * C + c) * KH + kh) * KW + kw, mask=mask, other=0.0)
                acc += xv * wv
    tl.store(y_ptr + offs, acc, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=False)
        self.extra = nn.Parameter(torch.randn(8))

    def forward(self, x):
        n, c, h, w = x.shape
        y = torch.empty((n, 8, h - 2, w - 2), device=x.device, dtype=x.dtype)
        _direct_conv_kernel[(triton.cdiv(y.numel(), 128),)](x, self.conv.weight, y, y.numel(), c, h, w, 8, h - 2,
                                                            w - 2, KH=3, KW=3, BLOCK=128)
        return _epilogue(y, self.extra)
""", "torch.relu(self.conv(x) + self.extra.view(1, -1, 1, 1))", "forward runs no torch convolution"),
    # reflect padding: the template pads with zeros only
    "reflect": ("""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect")
        self.extra = nn.Parameter(torch.randn(8))

    def forward(self, x):
        return _epilogue(self.conv(x), self.extra)
""", "torch.relu(self.conv(x) + self.extra.view(1, -1, 1, 1))", "padding_mode='reflect'"),
    # the convolution is hidden in a helper method: forward itself does not call it
    "helper_method": ("""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.extra = nn.Parameter(torch.randn(8))

    def _features(self, x):
        return self.conv(x)

    def forward(self, x):
        return _epilogue(self._features(x), self.extra)
""", "torch.relu(self.conv(x) + self.extra.view(1, -1, 1, 1))", "not called in forward"),
}
INPUT = {"conv3d_groups": "torch.randn(2, 4, 5, 9, 6)", "functional": "torch.randn(2, 4, 11, 9)"}
REFERENCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

{model}

def get_inputs():
    return [{x}]


def get_init_inputs():
    return []
"""


def write(tmp_path: Path, name: str) -> tuple[Path, Path]:
    model, expr, _ = SEEDS[name]
    x = INPUT.get(name, "torch.randn(2, 3, 10, 7)")
    seed = tmp_path / f"{name}.py"
    seed.write_text(HEADER + model + f"\n\ndef get_inputs():\n    return [{x}]\n\n\ndef get_init_inputs():\n"
                    "    return []\n")
    ref_model = textwrap.dedent(model).split("    def forward")[0] + f"    def forward(self, x):\n        return {expr}\n"
    ref = tmp_path / f"{name}_pytorch.py"
    ref.write_text(REFERENCE.format(model=ref_model, x=x))
    return seed, ref


def conv_recipes() -> list[dict]:
    return [e.model_dump(mode="json", exclude_none=True) for e in load_kb().filter(kind="recipe", stage="fusion")]


def proposals(source: str):
    return propose_rules(source, stage="fusion", target="nvidia-sm90", toolchain=Toolchain(name="triton",
                         version="3.6.0"), recipes=conv_recipes(), config_spaces=[])


@pytest.fixture(scope="module")
def evaluator():
    with Evaluator("cpu", timeout=600) as ev:
        yield ev


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_each_seed_gets_a_candidate_or_a_reason(name: str, tmp_path: Path, evaluator) -> None:
    seed, ref = write(tmp_path, name)
    made, skipped = proposals(seed.read_text())
    expect = SEEDS[name][2]
    conv_made = [p for p in made if p.recipe == "conv-implicit-gemm"]
    if expect != "applies":
        (skip,) = [s for s in skipped if s.recipe == "conv-implicit-gemm"]
        assert expect in skip.reason, skip.reason
        assert not conv_made
        return
    (candidate,) = conv_made
    assert "_xf_conv_igemm_kernel[" in candidate.code and "self.conv(" not in candidate.code.split("class Model")[1]
    problem = load_problem(seed, ref)
    seed_verdict = evaluator.evaluate(seed.read_text(), problem, allow_torch=input_allowance(problem), name="seed")
    assert seed_verdict.passed, seed_verdict.summary()  # the seed itself is right
    verdict = evaluator.evaluate(candidate.code, problem, allow_torch=input_allowance(problem), name=name)
    assert verdict.passed, verdict.summary()
    assert verdict.correctness[0].launches == 2  # the convolution is a Triton launch now


def test_a_candidate_keeps_no_torch_convolution(tmp_path: Path) -> None:
    from xe_forge.verify.static import check_source

    seed, _ = write(tmp_path, "module")
    (candidate,) = [p for p in proposals(seed.read_text())[0] if p.recipe == "conv-implicit-gemm"]
    assert check_source(candidate.code, allow=()).passed  # nothing left for torch to do
    assert not check_source(seed.read_text(), allow=()).passed  # while the seed needed self.conv allowed


def test_the_analyzer_sends_torch_convolutions_to_the_fusion_stage(tmp_path: Path) -> None:
    from xe_forge.pipeline.analyze import analyze_source

    for name in ("module", "functional", "conv3d_groups"):
        seed, _ = write(tmp_path, name)
        assert any(i.kind == "library-conv" and i.stage == "fusion" for i in analyze_source(seed.read_text())), name
    seed, _ = write(tmp_path, "direct_triton")
    assert not any(i.kind == "library-conv" for i in analyze_source(seed.read_text()))
