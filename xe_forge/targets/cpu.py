"""The CPU: Triton's interpreter, for correctness only (CI, and users without a GPU at hand)."""

from __future__ import annotations

import os
import platform
import time
from typing import Any

from xe_forge.targets.base import Device, DeviceProperties, OptionProblem, Toolchain, register
from xe_forge.targets.interpreter_races import patch_program_order
from xe_forge.targets.options import validate_options

# With no Intel GPU here, options are checked against the toolchain the user will run on the GPU
# (triton-xpu 3.7.2 pairs with torch 2.13, the version the `cpu` extra installs).
ASSUMED_XPU_TOOLCHAIN = Toolchain(name="triton-xpu", version="3.7.2")


def installed_triton_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return None
    for dist in ("triton", "triton-xpu", "pytorch-triton-xpu"):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return None


def patch_autotuner() -> None:
    """Multi-config @triton.autotune under the interpreter (autotune_rotation.py: each launch takes the next config)."""
    from xe_forge.targets.autotune_rotation import install

    install()


def patch_interpreter_dot() -> None:
    """Make the interpreter's tl.dot compute what a GPU's does: bf16 read as numbers, TF32 rounded.

    Triton's interpreter stores bf16 as uint16 and (through 3.9 at least) multiplies those bit
    patterns in tl.dot, so every bf16 GEMM is garbage on the CPU (1e10 where 1.0 is right) while it
    is fine on a GPU. Widening bf16 to fp32 first is exact, and what the hardware's dot computes.
    And it ignores input_precision: a dot in TF32 (asked for, or Triton's default for fp32 operands)
    would be exact fp32 here and 10 mantissa bits on a GPU, so fp32 operands are rounded to TF32 the
    way the hardware's conversion does (round to nearest even); tf32x3 and ieee stay fp32.
    """
    import numpy as np
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder.create_dot, "_xe_forge_dot", False):
        return
    original = builder.create_dot

    def widen(handle):
        if handle.dtype.scalar.name != "bf16":
            return handle
        bits = handle.data.astype(np.uint32) << np.uint32(16)
        return interpreter.TensorHandle(bits.view(np.float32), interpreter.tl.float32)

    def tf32(handle, input_precision):
        if getattr(input_precision, "name", None) != "TF32" or handle.dtype.scalar.name != "fp32":
            return handle
        return interpreter.TensorHandle(interpreter._round_f32_to_tf32(handle.data), handle.dtype.scalar)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        a, b = tf32(widen(a), input_precision), tf32(widen(b), input_precision)
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    create_dot._xe_forge_dot = True
    builder.create_dot = create_dot


@register
class CpuDevice(Device):
    kind = "cpu"
    default_target = "intel-xe2"
    measures_speed = False

    def __init__(self, target: str = "intel-xe2") -> None:
        self.target = target

    @classmethod
    def available(cls) -> bool:
        return True

    def properties(self) -> DeviceProperties:
        return DeviceProperties(kind="cpu", name=platform.processor() or platform.machine(),
                                compute_units=os.cpu_count() or 1)

    def toolchain(self) -> Toolchain:
        return Toolchain(name="triton", version=installed_triton_version() or "0")

    def target_toolchain(self) -> Toolchain:
        """The toolchain the kernel is being prepared for (the GPU's, not the interpreter's)."""
        return ASSUMED_XPU_TOOLCHAIN if self.target.startswith("intel") else self.toolchain()

    def torch_device(self) -> str:
        return "cpu"

    def prepare_process(self) -> None:
        os.environ["TRITON_INTERPRET"] = "1"
        patch_autotuner()
        patch_interpreter_dot()
        patch_program_order()

    def validate_launch_options(self, options: dict[str, Any]) -> list[OptionProblem]:
        return validate_options(options, self.target_toolchain(), target=self.target)

    clock_tolerance = 0.5  # the interpreter on a shared host: the protocol is exercised, not the figures

    def mark(self, made: Any = None) -> float:
        """The host clock: on the CPU the work is done when the call returns. Timing here only exercises
        the verifier's protocol through the interpreter (`Evaluator(cpu_timing=True)`, tests)."""
        return time.perf_counter()

    def elapsed_ms(self, start: float, end: float) -> float:
        return (end - start) * 1e3
