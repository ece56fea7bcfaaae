"""Dynamo's names for graph inputs become the expressions the packaged forward reads them with."""

from __future__ import annotations

import pytest

from xe_forge.proposers.lower.models import PackagingError
from xe_forge.proposers.lower.sources import source_expr


@pytest.mark.parametrize(("source", "expr"), [
    ("L['x']", "x"),
    ("L['self']._modules['conv']._parameters['weight']", "self.conv.weight"),
    ("L['self']._modules['bn']._buffers['running_mean']", "self.bn.running_mean"),
    ("L['self']._modules['conv']._parameters['weight'].size()[1]", "self.conv.weight.size(1)"),
    ("L['x'].stride()[0]", "x.stride(0)"),
    ("L['x'].storage_offset()", "x.storage_offset()"),
    ("L['self']._modules['layers']._modules['0']._parameters['bias']", "self.layers[0].bias"),
    ("L['self']._modules['blocks']._modules['a-b']._parameters['w']", "self.blocks['a-b'].w"),
    ("L['self'].scale", "self.scale"),
    ("L['self']._modules['leaky_relu'].negative_slope", "self.leaky_relu.negative_slope"),
    ("G['SCALE']", "SCALE"),
    ("L['args'][1]", "args[1]"),
])
def test_sources_become_forward_expressions(source: str, expr: str) -> None:
    assert source_expr(source) == expr


@pytest.mark.parametrize("source", ["___as_tensor(L['x'])", "L['x'].__class__", "L['x'] +", "type(L['x'])"])
def test_sources_the_forward_cannot_reach_are_refused(source: str) -> None:
    with pytest.raises(PackagingError):
        source_expr(source)
