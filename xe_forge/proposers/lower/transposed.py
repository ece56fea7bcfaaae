"""Transposed convolution as a regular convolution, so Inductor's Triton conv template applies.

Inductor has no Triton template for a transposed convolution (Triton-only lowering stops at
NoValidChoicesError). Per spatial dim, with stride s, padding p, dilation d, kernel k:

    y[o] = sum over (i, j) with i*s + j*d = o + p of x[i] * w[j]

Output positions split into s phases by r = (o + p) mod s. Phase r only meets the taps j with
j*d = r (mod s): an arithmetic progression j0, j0 + s', ... (s' = s / gcd(s, d)) whose input
offsets step by d' = d / gcd(s, d). So each phase is an ordinary convolution of the input with the
flipped sub-kernel w[j0::s'] (dilation d'), and the output interleaves the phases.

Two ways to run the s^D phases (D spatial dims), both exact:
- `merged` (what the lowering uses): every phase's sub-kernel is placed, zero-padded, in one common
  window, and the phases are stacked along the output channels: ONE convolution with s^D times the
  output channels. It does zero multiply-adds where sub-kernels are shorter than the window (k=3,
  s=2: 64 taps for 27 in 3D; none for k=4, s=2) but it is one large GEMM-shaped kernel that reads
  the input once, and Inductor autotunes one template instead of s^D.
- `phases`: s^D convolutions, exactly the transposed convolution's multiply-adds.
Both compute on a common window of output rows, so one reshape interleaves the phases and a final
slice applies padding and output_padding. Sizes may be symbolic (the lowering traces dynamically).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

REWRITE_NOTE = ("transposed convolutions as one regular convolution over stride^d output phases "
                "(xe_forge/proposers/lower/transposed.py)")


class _Phase:
    """One output phase of one spatial dim: the taps it meets and the input window it reads."""

    def __init__(self, r: int, s: int, d: int, k: int) -> None:
        taps = [j for j in range(k) if (j * d - r) % s == 0]
        self.r = r
        self.taps = taps
        step = s // math.gcd(s, d)
        self.d = d // math.gcd(s, d)  # input offset between consecutive taps of this phase
        assert all(b - a == step for a, b in itertools.pairwise(taps))
        # y_r[q] = sum_u x[q - a + u*d] * flip(w[taps])[u], with a the offset of the last tap
        self.a = (taps[0] * d - r) // s + (len(taps) - 1) * self.d if taps else 0
        self.span = (len(taps) - 1) * self.d + 1 if taps else 0  # input rows one output row reads


def _per_dim(value: Any, nd: int) -> list[int]:
    return [int(v) for v in value] if isinstance(value, list | tuple) and len(value) == nd else [int(value)] * nd


def conv_transpose_phases(x: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any,
                          groups: int, dilation: Any, mode: str = "merged") -> Any:
    """Same result as aten.convolution(..., transposed=True), from regular convolutions only."""
    import torch
    import torch.nn.functional as F

    nd = weight.dim() - 2
    s, p, op, d = (_per_dim(v, nd) for v in (stride, padding, output_padding, dilation))
    cin, cout_g, *k = weight.shape
    k = [int(v) for v in k]
    # transposed weight (Cin, Cout/g, k...) -> regular (Cout, Cin/g, k...), grouped the same way
    w = weight.reshape(groups, cin // groups, cout_g, *k).transpose(1, 2).reshape(groups * cout_g, cin // groups, *k)
    lin = list(x.shape[2:])
    lout = [(lin[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(nd)]
    phases = [[_Phase(r, s[i], d[i], k[i]) for r in range(s[i])] for i in range(nd)]
    qlo = [min(-((r - p[i]) // s[i]) for r in range(s[i])) for i in range(nd)]  # ceil((p - r) / s)
    qhi = [(lout[i] - 1 + p[i]) // s[i] for i in range(nd)]
    q = [qhi[i] - qlo[i] + 1 for i in range(nd)]
    # one padded input shared by every phase; each phase reads a window (a view) of it
    left = [max(ph.a - qlo[i] for ph in phases[i]) for i in range(nd)]
    right = [max(q[i] + ph.span - 1 - lin[i] - (ph.a - qlo[i]) for ph in phases[i]) for i in range(nd)]
    pads = [v for i in reversed(range(nd)) for v in (left[i], right[i])]
    xp = F.pad(x, pads) if any(isinstance(v, torch.SymInt) or v != 0 for v in pads) else x
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    if mode == "merged":
        full = _merged(xp, w, phases, left, qlo, q, s, groups, conv)
    else:
        full = _separate(x, xp, w, phases, left, qlo, q, s, groups, conv)
    y = full
    for i in range(nd):
        y = y.narrow(2 + i, p[i] - qlo[i] * s[i], lout[i])
    if bias is not None:
        y = y + bias.reshape(1, -1, *([1] * nd))
    return y


def _separate(x, xp, w, phases, left, qlo, q, s, groups, conv):
    """s^D convolutions, one per phase, stacked and interleaved: (N, C, Q1*s1, ..., QD*sD)."""
    import torch

    nd = len(s)
    outs = []
    for combo in itertools.product(*phases):
        if any(not ph.taps for ph in combo):
            outs.append(x.new_zeros((x.shape[0], w.shape[0], *q)))
            continue
        window = xp
        sub = w
        for i, ph in enumerate(combo):
            window = window.narrow(2 + i, left[i] - (ph.a - qlo[i]), q[i] + ph.span - 1)
            sub = sub[(slice(None),) * (2 + i) + (slice(ph.taps[0], ph.taps[-1] + 1, ph.taps[1] - ph.taps[0]
                                                      if len(ph.taps) > 1 else 1),)]
        sub = _dilate(sub.flip(list(range(2, 2 + nd))), [ph.d for ph in combo])
        outs.append(conv(window, sub, None, 1, 0, 1, groups))
    # (s1, ..., sD, N, C, Q1..QD) -> (N, C, Q1, s1, ..., QD, sD) -> interleaved rows, then the real window
    stacked = torch.stack(outs).reshape(*s, *outs[0].shape)
    order = [nd, nd + 1] + [v for i in range(nd) for v in (nd + 2 + i, i)]
    return stacked.permute(order).reshape(x.shape[0], w.shape[0], *[q[i] * s[i] for i in range(nd)])


def _merged(xp, w, phases, left, qlo, q, s, groups, conv):
    """All phases as one convolution over a common window, phases stacked along output channels."""
    import torch

    nd = len(s)
    start = [max(ph.a for ph in phases[i]) for i in range(nd)]  # the window reads x[q - start ...]
    size = [max(start[i] - ph.a + ph.span for ph in phases[i]) for i in range(nd)]
    cout, cin_g, *_ = w.shape
    kernels = []
    for combo in itertools.product(*phases):
        if not all(ph.taps for ph in combo):
            kernels.append(w.new_zeros((cout, cin_g, *size)))
            continue
        piece = w
        for i, ph in enumerate(combo):
            step = ph.taps[1] - ph.taps[0] if len(ph.taps) > 1 else 1
            piece = piece[(slice(None),) * (2 + i) + (slice(ph.taps[0], ph.taps[-1] + 1, step),)]
        piece = _dilate(piece.flip(list(range(2, 2 + nd))), [ph.d for ph in combo])
        # zero-pad the sub-kernel into the common window: taps land where this phase reads
        pads = [v for i in reversed(range(nd)) for v in (start[i] - combo[i].a,
                                                          size[i] - (start[i] - combo[i].a) - combo[i].span)]
        kernels.append(torch.nn.functional.pad(piece, pads))
    nphase = len(kernels)
    # (P, G*Cg, ...) -> (G, P, Cg, ...): each group's output block holds all phases of its channels
    stacked = torch.stack(kernels).reshape(nphase, groups, cout // groups, cin_g, *size).transpose(0, 1)
    window = xp
    for i in range(nd):
        window = window.narrow(2 + i, left[i] - (start[i] - qlo[i]), q[i] + size[i] - 1)
    y = conv(window, stacked.reshape(groups * nphase * (cout // groups), cin_g, *size), None, 1, 0, 1, groups)
    n = y.shape[0]
    y = y.reshape(n, groups, *s, cout // groups, *q)
    # (N, G, s1..sD, Cg, Q1..QD) -> (N, G, Cg, Q1, s1, ..., QD, sD)
    order = [0, 1, 2 + nd] + [v for i in range(nd) for v in (3 + nd + i, 2 + i)]
    return y.permute(order).reshape(n, cout, *[q[i] * s[i] for i in range(nd)])


def _dilate(sub: Any, dil: list[int]) -> Any:
    """Spread a kernel's taps `dil` apart with zeros between: dilation without a dilated conv.

    Inductor's Triton conv template takes dilation 1 only; a dilated transposed conv with a stride
    sharing a factor with the dilation is the only way d' > 1 arises here. Functional ops only (an
    in-place write would break the functionalized trace this runs in).
    """
    import torch

    for i, v in enumerate(dil):
        if v == 1:
            continue
        axis = 2 + i
        length = sub.shape[axis]
        spread = torch.stack([sub] + [torch.zeros_like(sub)] * (v - 1), dim=axis + 1)
        shape = list(sub.shape)
        shape[axis] = length * v
        sub = spread.reshape(shape).narrow(axis, 0, (length - 1) * v + 1)
    return sub


def convolution_decomposition(x: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
                              transposed: bool, output_padding: Any, groups: int) -> Any:
    """For aten.convolution in a decomposition table: transposed ones become phase convs, others stay."""
    if not transposed or weight.dim() < 3:
        return NotImplemented
    return conv_transpose_phases(x, weight, bias, stride, padding, output_padding, groups, dilation)
