"""The CPU: Triton's interpreter, for correctness only (CI, and users without a GPU at hand)."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

from xe_forge.targets.base import Device, DeviceProperties, OptionProblem, Toolchain, register
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


def _interpreter_do_bench(kernel_call, quantiles=None, **_: Any):
    """Stand-in for do_bench under the interpreter: runs each config once, ranks them all equal.

    Multi-config @triton.autotune otherwise fails with '0 active drivers'. Running every config once
    surfaces configs that crash; equal timings make the first config win, deterministically.
    """
    kernel_call()
    return [1.0, 1.0, 1.0] if quantiles else 1.0


def patch_autotuner() -> None:
    from triton.runtime import autotuner

    def do_bench(self):  # replaces a cached_property on the class
        return self._do_bench or _interpreter_do_bench

    autotuner.Autotuner.do_bench = property(do_bench)


def patch_interpreter_bf16_dot() -> None:
    """Make the interpreter's tl.dot read bf16 operands as numbers, not as their raw bits.

    Triton's interpreter stores bf16 as uint16 and (through 3.9 at least) multiplies those bit
    patterns in tl.dot, so every bf16 GEMM is garbage on the CPU (1e10 where 1.0 is right) while it
    is fine on a GPU. Widening bf16 to fp32 first is exact, and what the hardware's dot computes.
    """
    import numpy as np
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder.create_dot, "_xe_forge_bf16", False):
        return
    original = builder.create_dot

    def widen(handle):
        if handle.dtype.scalar.name != "bf16":
            return handle
        bits = handle.data.astype(np.uint32) << np.uint32(16)
        return interpreter.TensorHandle(bits.view(np.float32), interpreter.tl.float32)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return original(self, widen(a), widen(b), d, input_precision, max_num_imprecise_acc)

    create_dot._xe_forge_bf16 = True
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
        patch_interpreter_bf16_dot()

    def validate_launch_options(self, options: dict[str, Any]) -> list[OptionProblem]:
        return validate_options(options, self.target_toolchain(), target=self.target)

    def time_ms(self, fn: Callable[[], Any], *, flush: bool = True) -> float:
        """Host wall time of one call: exercises the verifier's timing protocol through the interpreter
        (`Evaluator(cpu_timing=True)`, tests only); the figures say nothing about a GPU."""
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
