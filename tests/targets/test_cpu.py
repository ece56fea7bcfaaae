"""The CPU target (xe_forge/targets/cpu.py): Triton's interpreter, switched on before kernels are
imported, with the autotune rotation so multi-config @triton.autotune runs (each launch takes the next
config, so every config is checked: red team 2, root cause 10). Process-level effects
are checked in child processes so they cannot leak into the test session."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from xe_forge.targets.cpu import ASSUMED_XPU_TOOLCHAIN, CpuDevice

AUTOTUNE_KERNEL = Path(__file__).parents[1] / "fixtures_foundation" / "problems" / "autotune_double.py"

RUN_AUTOTUNED = f"""
import os, sys
from xe_forge.targets.cpu import CpuDevice
if sys.argv[1] == "prepared":
    assert "TRITON_INTERPRET" not in os.environ
    CpuDevice().prepare_process()
    print("TRITON_INTERPRET=" + os.environ["TRITON_INTERPRET"])
else:
    os.environ["TRITON_INTERPRET"] = "1"  # the bare interpreter, without the benchmark stand-in
import torch
from xe_forge.problem.cases import import_from_path
module = import_from_path({str(AUTOTUNE_KERNEL)!r})
x = torch.arange(100, dtype=torch.float32)
for _ in range(4):  # the same key every time: a cached choice would serve one config only
    assert torch.equal(module.double(x), 2 * x)
    print("BEST", module._double_kernel.best_config.kwargs["BLOCK_SIZE"])
"""


def run_child(mode: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run([sys.executable, "-c", RUN_AUTOTUNED, mode], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture(scope="module")
def prepared() -> subprocess.CompletedProcess:
    return run_child("prepared")


def test_prepare_process_switches_on_the_interpreter(prepared):
    assert prepared.returncode == 0, prepared.stderr[-2000:]
    assert "TRITON_INTERPRET=1" in prepared.stdout


def test_multi_config_autotune_runs_under_the_interpreter_and_serves_every_config_in_turn(prepared):
    assert prepared.returncode == 0, prepared.stderr[-2000:]
    served = [line.split()[1] for line in prepared.stdout.splitlines() if line.startswith("BEST")]
    assert len(served) == 4 and set(served) == {"16", "64"}, served
    assert all(a != b for a, b in zip(served, served[1:], strict=False)), "one config after the other"


def test_without_the_patch_multi_config_autotune_fails_under_the_interpreter():
    """The control: if this starts passing, triton's interpreter benchmarks by itself and the patch can go."""
    bare = run_child("bare")
    assert bare.returncode != 0
    assert "0 active drivers" in bare.stderr, bare.stderr[-2000:]


def test_cpu_is_always_available_and_does_not_measure_speed():
    device = CpuDevice()
    assert CpuDevice.available() and device.torch_device() == "cpu"
    assert device.measures_speed is False
    calls = []
    assert device.time_ms(lambda: calls.append(1)) >= 0.0 and calls == [1], "a host timer, for protocol tests only"


def test_cpu_reports_the_installed_triton():
    toolchain = CpuDevice().toolchain()
    assert toolchain.name == "triton" and toolchain.version == version("triton")
    assert CpuDevice().properties().compute_units >= 1


def test_options_are_checked_for_the_gpu_the_kernel_is_prepared_for():
    intel = CpuDevice(target="intel-xe2")
    assert intel.target_toolchain() == ASSUMED_XPU_TOOLCHAIN
    assert intel.validate_launch_options({"grf_mode": "512", "num_warps": 32}) == []
    assert [p.option for p in intel.validate_launch_options({"num_warps": 128})] == ["num_warps"]

    nvidia = CpuDevice(target="nvidia-sm90")
    assert nvidia.target_toolchain().name == "triton"
    assert {p.option for p in nvidia.validate_launch_options({"grf_mode": "256", "num_warps": 64})} == {
        "grf_mode", "num_warps"}
    assert nvidia.validate_launch_options({"maxnreg": 128, "num_warps": 8}) == []


def test_the_interpreters_bf16_arithmetic_is_arithmetic_not_bit_patterns():
    """Triton's interpreter stores bf16 as uint16 and applied numpy's operators to the bits: `x > 0`
    held for every negative x and a clamp or an add was integer work (red team 4: a wrong bf16 ReLU
    passed, an honest bf16 kernel failed). CpuDevice.prepare_process widens to fp32 and rounds back."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent('''
        import torch, triton, triton.language as tl
        from xe_forge.targets.cpu import CpuDevice
        CpuDevice().prepare_process()

        @triton.jit
        def epilogue(x, out, n, B: tl.constexpr):
            o = tl.program_id(0) * B + tl.arange(0, B)
            v = tl.load(x + o, mask=o < n, other=0.0)
            v = tl.minimum(tl.maximum(tl.where(v > 0, v, 0.0) * 2.0 + 1.0, 0.5), 3.0)
            tl.store(out + o, -v, mask=o < n)  # a bf16 negation: unary, on the bits before

        x = torch.randn(1000).bfloat16()
        out = torch.empty_like(x)
        epilogue[(8,)](x, out, 1000, B=128)
        want = -torch.clamp(torch.relu(x) * 2.0 + 1.0, 0.5, 3.0)
        print(float((out.float() - want.float()).abs().max()))
    ''')
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITON_INTERPRET": "1"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert float(ran.stdout) <= 1 / 64, "within one bf16 rounding of values up to 3"
