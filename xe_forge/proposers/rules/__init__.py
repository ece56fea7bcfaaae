"""The offline rules proposer: knowledge-base recipes applied as source-to-source transforms.

One module per transform family (dtype, activations, launch_options, tiles, autotune, swizzle), the
analysis they share (kernels, launches, grid, meta_grid, options) and the dispatcher. The pipeline
calls `propose_rules`; see dispatch.py.
"""

from xe_forge.proposers.rules.dispatch import propose_rules
from xe_forge.proposers.rules.models import Proposal, Skip

__all__ = ["Proposal", "Skip", "propose_rules"]
