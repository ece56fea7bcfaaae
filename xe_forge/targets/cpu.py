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


def _bf16_to_f32(data):
    import numpy as np

    return (np.asarray(data).astype(np.uint32) << np.uint32(16)).view(np.float32)


def _f32_to_bf16(data):
    """fp32 to bf16 bits, rounded as torch (and a GPU's conversion) rounds: to nearest even, NaN kept
    quiet. In numpy, not through torch: this runs inside a launch, where the audit books torch work
    reached from harness code to the candidate (a bf16 kernel was refused for handing data to numpy)."""
    import numpy as np

    bits = np.ascontiguousarray(data, dtype=np.float32).view(np.uint32)
    rounded = ((bits + (((bits >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF))) >> np.uint32(16))
    nan = np.isnan(bits.view(np.float32))
    return np.where(nan, (bits >> np.uint32(16)) | np.uint32(0x40), rounded).astype(np.uint16)


def patch_interpreter_bf16() -> None:
    """Make the interpreter's bf16 arithmetic arithmetic. It stores bf16 as uint16 and applies numpy's
    operators to those bit patterns, so a bf16 add, compare, clamp or exp is integer work on raw bits
    (a ReLU's `x > 0` is true for every negative x). Here a bf16 operand is widened to fp32 (exact),
    the operation done there, and a floating result rounded back to bf16 (nearest even); comparisons
    give their booleans. A port's bf16 epilogue failed the 16-bit contract on it, and a red team's
    wrong bf16 ReLU passed."""
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder.binary_op, "_xe_forge_bf16", False):
        return
    binary, unary = builder.binary_op, builder.unary_op

    def is_bf16(handle):
        return handle.dtype.scalar.name == "bf16"

    def widened(handle):
        return interpreter.TensorHandle(_bf16_to_f32(handle.data), interpreter.tl.float32)

    def narrowed(handle):
        if handle.dtype.scalar.name != "fp32" or handle.data.dtype.kind != "f":
            return handle  # a comparison's booleans
        return interpreter.TensorHandle(_f32_to_bf16(handle.data), interpreter.tl.bfloat16)

    def binary_op(self, lhs, rhs, op):
        if not (is_bf16(lhs) and is_bf16(rhs)) or op in BITWISE:
            return binary(self, lhs, rhs, op)
        return narrowed(binary(self, widened(lhs), widened(rhs), op))

    def unary_op(self, arg, op):
        if not is_bf16(arg):
            return unary(self, arg, op)
        return narrowed(unary(self, widened(arg), op))

    import numpy as np

    BITWISE = (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift)
    binary_op._xe_forge_bf16 = True
    builder.binary_op, builder.unary_op = binary_op, unary_op


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
        patch_interpreter_bf16()
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
