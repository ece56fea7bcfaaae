"""The 16-bit contract (verify/precision.py): as close to the fp32 truth as PyTorch in that dtype, and no closer
a pass for less accurate work.

Each case computes the fp32 truth on bf16-rounded inputs and weights, PyTorch's own answer in bf16 (the
reference module run eagerly in bf16), and a candidate: honest ones round where a fused kernel rounds (a
GEMM's output to bf16 before a norm, as eager bf16 does too), cheats do less accurate work.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from xe_forge.verify.compare import compare_all

BF16 = torch.bfloat16
RTOL = ATOL = 1e-2


def bf(x):
    return x.to(BF16)


def judged(got, want, eager):
    return compare_all([got], [want], RTOL, ATOL, BF16, eager=[eager] if eager is not None else None)[0]


def gemm_groupnorm_case(seed=0, m=64, k=512, n=256, groups=16):
    """GEMM + GroupNorm where some groups' outputs are nearly constant: the norm amplifies any rounding."""
    g = torch.Generator().manual_seed(seed)
    x = bf(torch.randn(m, k, generator=g))
    w = torch.randn(n, k, generator=g) * 0.05
    w[: n // groups] = w[0] + 1e-3 * torch.randn(n // groups, k, generator=g)  # group 0: near-equal columns
    w = bf(w)
    gamma, beta = bf(torch.randn(n, generator=g)), bf(torch.randn(n, generator=g))
    truth = F.group_norm(F.linear(x.float(), w.float()), groups, gamma.float(), beta.float())
    eager = F.group_norm(F.linear(x, w), groups, gamma, beta)
    return x, w, gamma, beta, groups, truth, eager


def test_the_gemm_groupnorm_port_that_missed_by_two_elements_passes() -> None:
    x, w, gamma, beta, groups, truth, eager = gemm_groupnorm_case()
    # Inductor's port: fp32 accumulation in its own order, the GEMM output rounded to bf16 before the fused norm
    gemm = bf(F.linear(x.double(), w.double()).float())
    got = bf(F.group_norm(gemm.float(), groups, gamma.float(), beta.float()))
    today = judged(got, truth, None)
    assert not today.passed and 0 < today.mismatches < 0.05 * today.numel  # a few elements, as on the H200
    eager_alone = judged(eager, truth, None)
    assert not eager_alone.passed  # PyTorch itself misses there, by as much
    fair = judged(got, truth, eager)
    assert fair.passed, fair
    assert "within PyTorch's own" in fair.note


def test_eager_itself_and_a_more_accurate_candidate_pass() -> None:
    x, w, gamma, beta, groups, truth, eager = gemm_groupnorm_case(seed=1)
    assert judged(eager, truth, eager).passed
    assert judged(bf(truth), truth, eager).passed  # everything in fp32, rounded once


@pytest.mark.parametrize("cheat", ["fp8 operands", "fp16 accumulator", "dropped K tail", "unbiased variance",
                                   "no mean subtraction"])
def test_less_accurate_work_fails(cheat: str) -> None:
    x, w, gamma, beta, groups, truth, eager = gemm_groupnorm_case(seed=2, k=2048)
    if cheat == "fp8 operands":
        gemm = F.linear(x.to(torch.float8_e4m3fn).float(), w.to(torch.float8_e4m3fn).float())
    elif cheat == "fp16 accumulator":
        acc = torch.zeros(x.shape[0], w.shape[0], dtype=torch.float16)
        for i in range(0, x.shape[1], 8):  # eight products at a time into an fp16 running sum
            acc = (acc.float() + x[:, i:i + 8].float() @ w[:, i:i + 8].float().t()).half()
        gemm = acc.float()
    elif cheat == "dropped K tail":
        gemm = F.linear(x[:, :-32].float(), w[:, :-32].float())
    else:
        gemm = F.linear(x.float(), w.float())
    gemm = bf(gemm).float()
    if cheat == "unbiased variance":  # a group norm with the wrong divisor: 1 / (n - 1) instead of 1 / n
        grouped = gemm.reshape(gemm.shape[0], groups, -1)
        norm = (grouped - grouped.mean(-1, keepdim=True)) / (grouped.var(-1, keepdim=True) + 1e-5).sqrt()
        got = norm.reshape(gemm.shape) * gamma.float() + beta.float()
    elif cheat == "no mean subtraction":
        grouped = gemm.reshape(gemm.shape[0], groups, -1)
        norm = grouped / (grouped.var(-1, unbiased=False, keepdim=True) + 1e-5).sqrt()
        got = norm.reshape(gemm.shape) * gamma.float() + beta.float()
    else:
        got = F.group_norm(gemm, groups, gamma.float(), beta.float())
    result = judged(bf(got), truth, eager)
    assert not result.passed, f"{cheat}: {result}"


def test_a_bf16_sum_of_rounded_terms_passes_as_eager_does() -> None:
    """Conv + avg-pool + sigmoid + sum in bf16 (KernelBench #65): each op rounds to bf16, the sum adds them up."""
    g = torch.Generator().manual_seed(3)
    x, w = bf(torch.rand(4, 8, 34, 34, generator=g)), bf(torch.randn(16, 8, 3, 3, generator=g))

    def forward(x, w, dtype):
        y = torch.sigmoid(F.avg_pool2d(F.conv2d(x.to(dtype), w.to(dtype)), 4))
        return y.sum(dim=[1, 2, 3])

    truth, eager = forward(x, w, torch.float32), forward(x, w, BF16)
    conv = bf(F.conv2d(x.double(), w.double()).float())  # another accumulation order, then bf16 as eager
    got = bf(torch.sigmoid(bf(F.avg_pool2d(conv.float(), 4)).float())).float().sum(dim=[1, 2, 3])
    assert judged(bf(got), truth, eager).passed


def test_fp32_is_judged_as_before() -> None:
    want = torch.randn(100)
    got = want + 2e-4
    plain = compare_all([got], [want], 1e-4, 1e-4, torch.float32)[0]
    with_eager = compare_all([got], [want], 1e-4, 1e-4, torch.float32, eager=[got])[0]
    assert not plain.passed and not with_eager.passed and plain.mismatches == with_eager.mismatches


def test_non_finite_values_never_pass() -> None:
    x, w, gamma, beta, groups, truth, eager = gemm_groupnorm_case()
    got = bf(truth).clone()
    got[0, 0] = float("nan")
    assert not judged(got, truth, eager).passed


# ---------------------------------------------------------------- the same contract in fp32, against float64


def batchnorm_case(seed=0, rows=7, k=96, n=80):
    """GEMM + training-mode BatchNorm over 7 rows (an unseen batch) of inputs with a large common offset:
    the batch variance is a difference of large nearly equal numbers, which every fp32 order of summation
    rounds, and the norm amplifies what is left."""
    g = torch.Generator().manual_seed(seed)
    x = 300.0 + torch.randn(rows, k, generator=g, dtype=torch.float64)
    w = torch.randn(n, k, generator=g, dtype=torch.float64) * 0.05
    exact = F.batch_norm(F.linear(x, w), None, None, training=True)
    want = F.batch_norm(F.linear(x.float(), w.float()), None, None, training=True)
    order = torch.randperm(k, generator=g)  # another summation order, as a tiled kernel sums
    honest = F.batch_norm(F.linear(x.float()[:, order], w.float()[:, order]), None, None, training=True)
    return exact, want, honest


def test_an_honest_fp32_kernel_where_fp32_itself_loses_digits_passes_against_float64() -> None:
    exact, want, honest = batchnorm_case()
    today = compare_all([honest], [want], 1e-4, 1e-4, torch.float32)[0]
    assert not today.passed  # two fp32 orders of summation disagree beyond 1e-4 here
    fair = compare_all([honest], [want], 1e-4, 1e-4, torch.float32, exact=[exact])[0]
    assert fair.passed, fair
    assert "fp32 reference's own error" in fair.note


@pytest.mark.parametrize("cheat", ["errors 50x the honest kernel's", "a scale off by 1%", "a shifted mean"])
def test_less_accurate_fp32_work_still_fails_against_float64(cheat: str) -> None:
    exact, want, honest = batchnorm_case(seed=1)
    got = {"errors 50x the honest kernel's": want + 50 * (honest - want) + 1e-3 * torch.sign(want),
           "a scale off by 1%": want * 1.01, "a shifted mean": want + 0.05}[cheat]
    assert not compare_all([got], [want], 1e-4, 1e-4, torch.float32, exact=[exact])[0].passed


def test_without_a_usable_float64_truth_fp32_is_judged_as_before() -> None:
    exact, want, honest = batchnorm_case()
    plain = compare_all([honest], [want], 1e-4, 1e-4, torch.float32)[0]
    misshaped = compare_all([honest], [want], 1e-4, 1e-4, torch.float32, exact=[exact[:1]])[0]
    assert not misshaped.passed and misshaped.mismatches == plain.mismatches
