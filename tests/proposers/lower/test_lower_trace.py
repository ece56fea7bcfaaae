"""Tracing as the lowering does: every size its own symbol (no duck sizing), sources and kinds recorded."""

from __future__ import annotations

import torch
import torch.nn as nn

from xe_forge.proposers.lower.trace import trace_placeholders


class Square(nn.Module):
    """in_features == out_features, as in many KernelBench GEMMs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.scale = 0.5

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale


def test_equal_sizes_stay_separate_symbols_and_scalars_are_marked() -> None:
    record = trace_placeholders(Square(), [torch.randn(16, 16)])
    sources = {p.source: p.kind for p in record["placeholders"]}
    assert sources["L['self']._modules['fc']._parameters['weight'].size()[0]"] == "symint"
    assert sources["L['self']._modules['fc']._parameters['weight'].size()[1]"] == "symint"  # not merged with [0]
    assert sources["L['x'].size()[0]"] == "symint"
    assert sources["L['self'].scale"] == "scalar"
    assert sources["L['x']"] == "tensor"
    assert record["graphs"] == 1 and record["outputs"] == 1 and record["returns_tuple"] is False


def test_duck_sizing_merges_equal_sizes_when_asked() -> None:
    record = trace_placeholders(Square(), [torch.randn(16, 16)], duck_shape=True)
    symbols = [p.source for p in record["placeholders"] if p.kind == "symint"]
    assert symbols == ["L['self']._modules['fc']._parameters['weight'].size()[0]"]  # one symbol for all the 16s
