"""Trial inputs in several non-contiguous layouts (red team 2, root cause 7).

A kernel that copies transposed inputs and otherwise assumes a row stride equal to the width passed
when trial 1 was always transposed; each layout here breaks a different strided-path assumption, and
every evaluation shows all of them (one at the main shape, the others at unseen shapes) in a secret order.
"""

from __future__ import annotations

import torch

from xe_forge.problem.layouts import LAYOUTS, lay_out, layout_order, unseen_layouts


def test_each_layout_keeps_the_values_in_other_storage():
    x = torch.randn(5, 7)
    for layout in ("transposed", "column slice", "step 2"):
        y = lay_out(x, layout)
        assert torch.equal(y, x) and not y.is_contiguous(), layout
    sliced = lay_out(x, "column slice")
    assert sliced.stride() == (7 + 6, 1) and sliced.storage_offset() > 0, "a padded row stride at an offset"
    assert lay_out(x, "step 2").stride(-1) == 2 and lay_out(x, "transposed").stride() == (1, 5)


def test_the_expanded_layout_repeats_the_first_row_with_stride_zero():
    x = torch.randn(4, 3, 6)
    y = lay_out(x, "expanded")
    assert y.stride(0) == 0 and torch.equal(y[3], x[0]) and y.shape == x.shape


def test_vectors_and_single_rows_get_a_layout_that_fits():
    v = torch.randn(9)
    for layout in LAYOUTS:
        y = lay_out(v, layout)
        assert torch.equal(y, v) and (not y.is_contiguous() or y.storage_offset() > 0), layout
    assert lay_out(torch.tensor(3.0), "step 2").dim() == 0 and lay_out(4, "transposed") == 4


def test_every_layout_is_shown_per_evaluation_in_a_secret_order():
    orders = {tuple(layout_order(seed)) for seed in range(40)}
    assert len(orders) > 6 and all(sorted(o) == sorted(LAYOUTS) for o in orders)
    order = layout_order(7)
    per_shape = unseen_layouts(order, 8)
    assert set(per_shape[1::2]) | {order[0]} == set(LAYOUTS), "the main shape's and the unseen shapes' together"
    assert per_shape[0::2] == [None] * 4, "the contiguous path is checked at unseen shapes too"
