"""A recorded lowering + its reference -> one standalone kernel module in the product's format.

The module is the reference file itself with `Model.forward` replaced: the constructor, parameter
and buffer names, module constants, get_inputs() and get_init_inputs() stay exactly the
reference's (so weights pair by name and the same constructor arguments work), and forward launches
the lowered @triton.jit kernels defined below it. Nothing from torch._inductor is imported; no device
is named (buffers go on the inputs' device), so the same file runs on any Triton backend and under
the interpreter. This is the lowering alone, serving every call; a port (port.py) puts it in front
of the general path, where it serves only the signature it was lowered for.
"""

from __future__ import annotations

from xe_forge.proposers.lower.models import Lowering, Packaged
from xe_forge.proposers.lower.port import package_single


def package(lowering: Lowering, reference_source: str) -> Packaged:
    """Package one lowering; a construct the packager cannot express raises PackagingError."""
    return package_single(lowering, reference_source)
