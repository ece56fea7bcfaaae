"""Non-contiguous layouts for a trial's inputs: which strided path a kernel assumes is not known.

A kernel that copies transposed inputs and otherwise assumes a row stride equal to the row's width
passes a transposed trial and fails on `x[:, :K]` of a wider buffer; one that handles a padded row
stride may still assume a unit column stride or a nonzero batch stride. So each evaluation draws the
layouts in secret and shows several at different checked shapes (evaluate.py): the main shape's
strided trial takes one, every other unseen shape the next.
"""

from __future__ import annotations

import random
from typing import Any

# the values are the same in every layout but "expanded", whose rows repeat the first (stride 0)
LAYOUTS = ("transposed", "column slice", "step 2", "expanded")
DESCRIBED = {"transposed": "the last two dims transposed in memory",
             "column slice": "a column slice at a storage offset of a wider buffer (row stride past the width)",
             "step 2": "every other element of a buffer twice as wide (column stride 2)",
             "expanded": "the first row expanded along the leading dim (stride 0)"}


def layout_order(seed: int) -> list[str]:
    """Every layout once, in an order drawn from the evaluation's secret seed."""
    order = list(LAYOUTS)
    random.Random(seed).shuffle(order)
    return order


def unseen_layouts(order: list[str], count: int) -> list[str | None]:
    """Per unseen shape: contiguous inputs at even positions (the contiguous path is checked there too),
    the layouts after the main shape's (order[0]) at odd ones, then round again."""
    rest = order[1:] + order[:1]
    return [None if i % 2 == 0 else rest[(i // 2) % len(rest)] for i in range(count)]


def lay_out(x: Any, layout: str | None) -> Any:
    """`x` in `layout` (torch.save keeps the strides); a tensor the layout does not fit keeps its own."""
    import torch

    if not layout or not torch.is_tensor(x) or x.numel() < 2 or x.dim() == 0:
        return x
    if layout == "transposed" and x.dim() >= 2 and x.shape[-1] > 1 and x.shape[-2] > 1:
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "column slice":
        pad = 3
        buf = x.new_zeros((*x.shape[:-1], x.shape[-1] + 2 * pad))
        out = buf[..., pad:pad + x.shape[-1]]
        out.copy_(x)
        return out
    if layout == "expanded" and x.dim() >= 2 and x.shape[0] > 1:
        return x[:1].expand_as(x)
    # "step 2", and what the others do not fit (a vector, a single row)
    out = x.new_zeros((*x.shape[:-1], 2 * x.shape[-1]))[..., ::2]
    out.copy_(x)
    return out
