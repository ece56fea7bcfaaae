"""The lowering's plumbing on the CPU: Inductor emits C++ here, so the library backends stand in.

On a GPU the same function runs Triton-only; what this checks holds on both: one graph, the
transposed convolution decomposed before Inductor sees it, graph-input sources and shape guards
recorded, and a non-Triton wrapper refused by the packager with a clear reason.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from xe_forge.proposers.lower.inductor import lower_model
from xe_forge.proposers.lower.models import PackagingError
from xe_forge.proposers.lower.package import package

REFERENCE = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.scale = 0.5

    def forward(self, x):
        return torch.relu(self.up(x)) * self.scale


def get_inputs():
    return [torch.randn(2, 4, 5, 6)]


def get_init_inputs():
    return []
"""


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.scale = 0.5

    def forward(self, x):
        return torch.relu(self.up(x)) * self.scale


@pytest.mark.slow
def test_lowering_records_sources_guards_and_the_rewrite() -> None:
    lowering = lower_model(Model(), [torch.randn(2, 4, 5, 6)], problem="up.py", dtype="float32", backends="ATEN")
    assert lowering.ok and len(lowering.codes) == 1 and lowering.max_abs_err < 1e-5
    sources = [p.source for p in lowering.placeholders]
    assert "L['self']._modules['up']._parameters['weight']" in sources and "L['x']" in sources
    assert any(p.kind == "scalar" and p.source == "L['self'].scale" for p in lowering.placeholders)
    assert lowering.rewrites and "transposed" in lowering.rewrites[0]
    assert "transposed=False" in lowering.codes[0] and "transposed=True" not in lowering.codes[0]
    assert any("self.up.weight.size" in g for g in lowering.guards)
    # what a port checks per call: each size's assumed range and the model's configuration
    assert lowering.ranges["x.size(0)"][0] == 2  # Dynamo's default: sizes 0 and 1 are specialised
    assert lowering.ranges["self.up.weight.size(1)"] == [6, 6]  # a guard pinned it
    assert lowering.config["self.up.stride"] == "(2, 2)" and lowering.config["self.up.training"] == "True"
    with pytest.raises(PackagingError, match="not Triton"):
        package(lowering, REFERENCE)


@pytest.mark.slow
def test_a_budgeted_lowering_records_its_budget() -> None:
    lowering = lower_model(Model(), [torch.randn(2, 4, 5, 6)], problem="up.py", dtype="float32", backends="ATEN",
                           budget_s=30.0)
    assert lowering.ok and lowering.budget_s == 30.0 and not lowering.budget_spent
