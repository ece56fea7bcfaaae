"""The `lower` proposer: TorchInductor's Triton-only lowering of the reference, as a kernel module.

inductor.py lowers on a GPU and records a `Lowering` (trace.py: Dynamo settings and graph-input
sources; transposed.py: transposed convolutions made lowerable); runner.py runs that in its own
process; wrapper.py, kernels.py, forward.py and package.py turn the record into a standalone module
(helpers.py replaces Inductor's runtime helpers); service.py caches, loads and verifies; proposer.py
is the stage candidate source. Every candidate goes through xe_forge.verify.Evaluator.
"""

from xe_forge.proposers.lower.models import Lowering, Packaged, PackagingError
from xe_forge.proposers.lower.package import package

__all__ = ["Lowering", "Packaged", "PackagingError", "package"]
