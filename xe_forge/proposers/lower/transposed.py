"""Transposed convolution as regular convolutions, so Inductor's Triton conv template applies.

Inductor has no Triton template for a transposed convolution (Triton-only lowering stops at
NoValidChoicesError). Per spatial dim, with stride s, padding p, dilation d, kernel k:

    y[o] = sum over (i, j) with i*s + j*d = o + p of x[i] * w[j]

Output positions split into s phases by r = (o + p) mod s. Phase r only meets the taps j with
j*d = r (mod s): an arithmetic progression j0, j0 + s', ... (s' = s / gcd(s, d)) whose input
offsets step by d' = d / gcd(s, d). So each phase is an ordinary convolution of the input with the
flipped sub-kernel w[j0::s'] (dilation d'), and the output interleaves the phases: s^D regular
convolutions (D spatial dims) that together do exactly the transposed convolution's multiply-adds,
never the zeros a stride-dilated input would add. Each phase conv is computed on a common window
of output rows, so the phases stack and one reshape interleaves them; a final slice applies
padding and output_padding. Sizes may be symbolic (the lowering traces with dynamic shapes).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

REWRITE_NOTE = "transposed convolutions as stride^d phase convolutions (xe_forge/proposers/lower/transposed.py)"


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
                          groups: int, dilation: Any) -> Any:
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
    full = stacked.permute(order).reshape(x.shape[0], w.shape[0], *[q[i] * s[i] for i in range(nd)])
    y = full
    for i in range(nd):
        y = y.narrow(2 + i, p[i] - qlo[i] * s[i], lout[i])
    if bias is not None:
        y = y + bias.reshape(1, -1, *([1] * nd))
    return y


def _dilate(sub: Any, dil: list[int]) -> Any:
    """Spread a kernel's taps `dil` apart with zeros between: dilation without a dilated conv.

    Inductor's Triton conv template takes dilation 1 only; a dilated transposed conv with a stride
    sharing a factor with the dilation is the only way d' > 1 arises here.
    """
    if all(v == 1 for v in dil):
        return sub
    nd = len(dil)
    shape = list(sub.shape[:2]) + [(sub.shape[2 + i] - 1) * dil[i] + 1 for i in range(nd)]
    out = sub.new_zeros(shape)
    index = (slice(None), slice(None)) + tuple(slice(None, None, v) for v in dil)
    out[index] = sub
    return out


def convolution_decomposition(x: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
                              transposed: bool, output_padding: Any, groups: int) -> Any:
    """For aten.convolution in a decomposition table: transposed ones become phase convs, others stay."""
    if not transposed or weight.dim() < 3:
        return NotImplemented
    return conv_transpose_phases(x, weight, bias, stride, padding, output_padding, groups, dilation)
