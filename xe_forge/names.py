"""The names every layer shares: knowledge-base targets, recipe names, candidate sources.

The stages YAML, the knowledge-base schema, the rules proposer and the devices all speak of these;
declared here, below all of them, each can check a name without importing another layer.
"""

from __future__ import annotations

from typing import Literal

# Knowledge-base targets: what a kernel is optimised for (a device reports one of the first four).
TARGETS = ("intel-xe2", "intel-xe-hpc", "intel-xe-hpg", "nvidia-sm90", "nvidia-any", "any")

# Transforms of the rules proposer, by the name recipe entries and stages/*.yaml give them.
RecipeName = Literal["drop-dot-upcast", "fp64-to-fp32", "exp2-activations", "launch-options", "tile-sizes",
                     "autotune", "group-swizzle", "fuse-epilogue", "tensor-descriptors",
                     "persistent-loop", "conv-implicit-gemm"]

# Candidate sources a stage may declare (`sources:`); each is built by pipeline/run.py's context
# (lower: xe_forge/proposers/lower, TorchInductor's Triton lowering of the reference).
SourceName = Literal["lower"]
