"""Transposed convolutions as regular convolutions: exact for every parameter combination, traceable.

Covers all KernelBench level-2 combinations (stride, padding, output_padding, bias, 2D and 3D) and
more (dilation, groups, 1D, kernel sizes 1-5), both formulations, against torch's own operator.
"""

from __future__ import annotations

import itertools
import random

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.backends.common import aot_autograd

from xe_forge.proposers.lower.trace import dynamo_settings
from xe_forge.proposers.lower.transposed import conv_transpose_phases, convolution_decomposition

REFERENCE = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def random_cases(seed: int, count: int):
    rng = random.Random(seed)
    while count:
        nd = rng.choice([1, 2, 2, 3])
        s = [rng.choice([1, 2, 3]) for _ in range(nd)]
        d = [rng.choice([1, 1, 2, 3]) for _ in range(nd)]
        k = [rng.randint(1, 5) for _ in range(nd)]
        p = [rng.randint(0, d[i] * (k[i] - 1)) for i in range(nd)]
        op = [rng.randint(0, max(s[i], d[i]) - 1) for i in range(nd)]
        size = [rng.randint(1, 6) for _ in range(nd)]
        if any((size[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 < 1 or op[i] >= max(s[i], d[i])
               for i in range(nd)):
            continue
        count -= 1
        yield nd, s, d, k, p, op, rng.choice([1, 2, 3]), rng.random() < 0.5, size


@pytest.mark.parametrize("mode", ["merged", "phases"])
def test_random_parameter_combinations_match_torch(mode: str) -> None:
    torch.manual_seed(0)
    for nd, s, d, k, p, op, groups, bias, size in random_cases(1, 120):
        x = torch.randn(2, 2 * groups, *size, dtype=torch.float64)
        w = torch.randn(2 * groups, 3, *k, dtype=torch.float64)
        b = torch.randn(3 * groups, dtype=torch.float64) if bias else None
        want = REFERENCE[nd](x, w, b, s, p, op, groups, d)
        got = conv_transpose_phases(x, w, b, s, p, op, groups, d, mode=mode)
        assert got.shape == want.shape, (nd, s, d, k, p, op, groups)
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10, msg=str((nd, s, d, k, p, op, groups)))


@pytest.mark.parametrize(("nd", "stride", "padding", "output_padding"), [
    (2, 1, 0, 0), (2, 2, 0, 0), (2, 2, 1, 0), (2, 2, 1, 1), (3, 1, 0, 0), (3, 2, 1, 0), (3, 2, 1, 1),
    (3, 2, 2, 1), (3, (2, 2, 2), (1, 1, 1), (1, 1, 1)),
])
@pytest.mark.parametrize("kernel", [3, 4])
def test_kernelbench_combinations_match_torch(nd, stride, padding, output_padding, kernel) -> None:
    torch.manual_seed(1)
    conv = (nn.ConvTranspose2d if nd == 2 else nn.ConvTranspose3d)(4, 6, kernel, stride=stride, padding=padding,
                                                                   output_padding=output_padding).double()
    x = torch.randn(2, 4, *([5] * nd), dtype=torch.float64)
    got = conv_transpose_phases(x, conv.weight, conv.bias, conv.stride, conv.padding, conv.output_padding,
                                conv.groups, conv.dilation)
    torch.testing.assert_close(got, conv(x), rtol=1e-10, atol=1e-10)


def test_regular_convolutions_are_left_alone() -> None:
    x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)
    assert convolution_decomposition(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1) is NotImplemented


@pytest.mark.parametrize("dilation", [1, 2])
def test_the_decomposition_traces_with_dynamic_shapes_into_one_regular_convolution(dilation: int) -> None:
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm

    backend = aot_autograd(fw_compiler=keep,
                           decompositions={torch.ops.aten.convolution.default: convolution_decomposition})
    model = nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, output_padding=1, dilation=dilation).double()
    torch._dynamo.reset()
    with dynamo_settings(), torch.no_grad():
        compiled = torch.compile(model, backend=backend, dynamic=True, fullgraph=True)
        for shape in [(2, 4, 3, 4, 5), (3, 4, 5, 3, 2)]:  # the second size runs the same graph
            x = torch.randn(*shape, dtype=torch.float64)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-10, atol=1e-10)
    torch._dynamo.reset()
    assert len(graphs) == 1
    convs = [n for n in graphs[0].graph.nodes if n.target == torch.ops.aten.convolution.default]
    assert len(convs) == 1 and convs[0].args[6] is False and list(convs[0].args[5]) == [1, 1, 1]


def test_both_formulations_agree_on_every_small_3d_case() -> None:
    torch.manual_seed(2)
    for s, p, op in itertools.product([1, 2], [0, 1], [0, 1]):
        if op >= s:
            continue
        x = torch.randn(1, 2, 3, 4, 3, dtype=torch.float64)
        w = torch.randn(2, 3, 3, 2, 3, dtype=torch.float64)
        a = conv_transpose_phases(x, w, None, s, p, op, 1, 1, mode="merged")
        b = conv_transpose_phases(x, w, None, s, p, op, 1, 1, mode="phases")
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
