"""A recipe that does not apply to several kernels for one reason says that reason once (the note a
stage prints), naming the kernels; different reasons stay apart."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)

from xe_forge.proposers.rules import propose_rules  # noqa: E402
from xe_forge.proposers.rules.context import refusals  # noqa: E402
from xe_forge.targets.base import Toolchain  # noqa: E402

XPU = Toolchain(name="triton-xpu", version="3.7.2")
PRECONDITION = "precondition 'the kernel has no tl.dot' does not hold for this gemm kernel"


def test_one_reason_for_two_kernels_is_said_once():
    text = refusals({PRECONDITION: ["_a_kernel", "_b_kernel"], "kernel is wrapped in @triton.autotune": ["_c"]})
    assert text.count("precondition") == 1 and "(_a_kernel, _b_kernel)" in text
    assert "_c: kernel is wrapped in @triton.autotune" in text


def _two_gemm_kernels() -> str:
    """gemm_literal with its kernel twice, each launched from forward."""
    source = h.fixture_source("gemm_literal")
    start, end = source.index("@triton.jit"), source.index("class Model")
    twin = source[start:end].replace("def matmul_kernel(", "def matmul_kernel_b(")
    launch = source[source.index("        matmul_kernel[("):source.index("        return")]
    source = source[:end] + twin + source[end:]
    return source.replace(launch, launch + launch.replace("matmul_kernel[(", "matmul_kernel_b[("), 1)


def test_a_two_kernel_file_gets_the_precondition_once():
    source = _two_gemm_kernels()
    assert source.count("tl.dot(") == 2 and "matmul_kernel_b[(" in source
    entry = {"id": "ew", "recipe": {"name": "launch-options", "params": {"num_warps": 16},
                                    "preconditions": ["the kernel has no tl.dot"]}}
    _, skips = propose_rules(source, stage="device_tuning", target="intel-xe2", toolchain=XPU, recipes=[entry],
                             config_spaces=[])
    (skip,) = skips
    assert skip.reason.count("precondition 'the kernel has no tl.dot'") == 1, skip.reason
    assert "(matmul_kernel, matmul_kernel_b)" in skip.reason
