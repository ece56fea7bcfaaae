"""Inductor's call() -> forward: launches, grids, allocations, views, scalars, library calls.

Small hand-written wrapper modules in the shape Inductor writes them, so each construct is checked
on its own, including ones the recorded lowerings do not happen to contain (2D grids, y-overflow
grids, CPU-side scratch, library calls).
"""

from __future__ import annotations

import pytest

from xe_forge.proposers.lower.forward import build_forward
from xe_forge.proposers.lower.models import LaunchConfig, Lowering, PackagingError, Placeholder
from xe_forge.proposers.lower.wrapper import parse_wrapper

KERNEL = '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={{'y': 64, 'x': 64}},
    filename=__file__,
    triton_meta={{'signature': {{'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'ynumel': 'i32', 'xnumel': 'i32', 'YBLOCK': 'constexpr', 'XBLOCK': 'constexpr'}}, 'device': DeviceProperties(type='cuda', index=0), 'constants': {{}}}},
    inductor_meta={{'grid_type': '{grid}', 'autotune_hints': set(), 'kernel_name': 'triton_poi_k_0'}},
)
@triton.jit
def triton_poi_k_0(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK : tl.constexpr, XBLOCK : tl.constexpr):
    yoffset = tl.program_id(1) * YBLOCK
    xoffset = tl.program_id(0) * XBLOCK
    tmp0 = tl.load(in_ptr0 + xoffset)
    tmp1 = libdevice.tanh(tmp0) + tl_math.abs(tmp0) + libdevice.exp(tmp0)
    tmp2 = triton_helpers.maximum(tmp1, tmp0)
    tl.store(out_ptr0 + xoffset, tmp2)
'''

WRAPPER = '''
import torch
from torch._inductor.select_algorithm import extern_kernels
aten = torch.ops.aten
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda

triton_poi_k_0 = async_compile.triton('triton_poi_k_0', {kernel!r}, device_str='cuda')

class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1 = args
        args.clear()
        s0 = arg0_1
        assert_size_stride(arg1_1, (s0, 8), (8, 1))
        assert_size_stride(arg2_1, (8, 8), (8, 1))
        with torch.cuda._DeviceGuard(0):
            torch.cuda.set_device(0)
            buf0 = empty_strided_cuda((s0, 8), (8, 1), torch.float32)
            buf9 = empty_strided_cpu((1, ), (1, ), torch.int64)
            stream0 = get_raw_stream(0)
            extern_kernels.mm(arg1_1, arg2_1, out=buf0)
            aten.randint.low_out(0, 10, [1], out=buf9)
            triton_poi_k_0.run(buf0, buf0, s0, 8 * arg3_1.item(), stream=stream0)
            del arg1_1
        return (reinterpret_tensor(buf0, (8, s0), (1, 8), 4), )
'''

PLACEHOLDERS = [Placeholder(source="L['x'].size()[0]", kind="symint"), Placeholder(source="L['x']"),
                Placeholder(source="L['self']._modules['fc']._parameters['weight']"),
                Placeholder(source="L['self'].scale", kind="scalar")]


def forward_lines(grid: str = "Grid2D", configs: dict | None = None, **update) -> tuple[list[str], list[str]]:
    wrapper = parse_wrapper(WRAPPER.format(kernel=KERNEL.format(grid=grid)))
    configs = configs if configs is not None else {
        "triton_poi_k_0": LaunchConfig(kwargs={"XBLOCK": 32, "YBLOCK": 4}, num_warps=2, num_stages=1)}
    lowering = Lowering(problem="p.py", dtype="float32", ok=True, codes=[], configs=configs,
                        placeholders=PLACEHOLDERS, **update)
    return build_forward(wrapper, lowering, ["x"])


def test_inputs_are_bound_from_the_model_and_the_device_from_the_input() -> None:
    lines, _ = forward_lines()
    assert lines[:5] == ["arg0_1 = x.size(0)", "arg1_1 = x", "arg2_1 = self.fc.weight", "arg3_1 = self.scale",
                         "_dev = arg1_1.device"]


def test_allocation_views_and_scalars_are_plain_torch() -> None:
    text = "\n".join(forward_lines()[0])
    assert "buf0 = torch.empty_strided((s0, 8), (8, 1), dtype=torch.float32, device=_dev)" in text
    assert "device='cpu'" in text  # Inductor's CPU-side scratch stays on the CPU
    assert "return torch.as_strided(buf0, (8, s0), (1, 8), buf0.storage_offset() + 4)" in text
    assert "8 * arg3_1" in text and ".item()" not in text  # the Python number is used as it is
    for gone in ("set_device", "DeviceGuard", "get_raw_stream", "args.clear", "stream=", "cuda"):
        assert gone not in text


def test_symbolic_size_asserts_go_and_pinned_ones_become_a_clear_error() -> None:
    text = "\n".join(forward_lines()[0])
    assert "tuple(arg1_1.shape) != (s0, 8)" in text  # 8 is pinned
    assert "tuple(arg2_1.shape) != (8, 8)" in text
    assert "lowered for self.fc.weight of shape (8, 8)" in text


def test_library_calls_stay_and_are_listed() -> None:
    lines, extern = forward_lines()
    assert extern == ["torch.mm", "torch.ops.aten.randint.low_out"]
    text = "\n".join(lines)
    assert "torch.mm(arg1_1, arg2_1, out=buf0)" in text
    assert "torch.ops.aten.randint.low_out(0, 10, [1], out=buf9)" in text


@pytest.mark.parametrize(("grid", "expected"), [
    ("Grid2D", "triton_poi_k_0[triton.cdiv(8 * arg3_1, 32), triton.cdiv(s0, 4), 1]"),
    ("Grid1D", "triton_poi_k_0[triton.cdiv(8 * arg3_1, 32), 1, 1]"),
    ("BatchMatmulGrid3D", None),
])
def test_grids_follow_inductors_grid_rule(grid: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(PackagingError, match="grid needs znumel"):
            forward_lines(grid)
        return
    launch = next(line for line in forward_lines(grid)[0] if line.startswith("triton_poi_k_0["))
    assert launch.startswith(expected)
    assert launch.endswith("(buf0, buf0, s0, 8 * arg3_1, XBLOCK=32, YBLOCK=4, num_warps=2, num_stages=1)")


def test_a_y_grid_past_the_hardware_limit_spills_into_z() -> None:
    lines, _ = forward_lines("Grid2DWithYZOverflow")
    text = "\n".join(lines)
    assert "_ygrid1 = triton.cdiv(s0, 4)" in text and "_ygrid1_split = triton.cdiv(_ygrid1, 65535)" in text
    assert "triton_poi_k_0[triton.cdiv(8 * arg3_1, 32), triton.cdiv(_ygrid1, max(_ygrid1_split, 1)), " \
           "_ygrid1_split]" in text


def test_unknown_grid_rules_and_missing_configs_are_refused() -> None:
    with pytest.raises(PackagingError, match="grid type 'NoSuchGrid'"):
        forward_lines("NoSuchGrid")
    with pytest.raises(PackagingError, match="no launch config"):
        forward_lines(configs={})
    with pytest.raises(PackagingError, match="no recorded value|launcher takes"):
        forward_lines(configs={"triton_poi_k_0": LaunchConfig(kwargs={"XBLOCK": 32})})


def test_kernel_bodies_lose_inductor_imports() -> None:
    kernel = parse_wrapper(WRAPPER.format(kernel=KERNEL.format(grid="Grid2D"))).kernels["triton_poi_k_0"]
    assert kernel.helpers == {"tanh", "maximum"}
    assert "_xf_tanh(tmp0) + tl.abs(tmp0) + tl.exp(tmp0)" in kernel.source
    assert "triton_helpers" not in kernel.source and "libdevice" not in kernel.source
    assert kernel.source.startswith("@triton.jit\ndef triton_poi_k_0(")


def test_a_forward_argument_named_like_a_generated_name_is_refused() -> None:
    wrapper = parse_wrapper(WRAPPER.format(kernel=KERNEL.format(grid="Grid2D")))
    lowering = Lowering(problem="p.py", dtype="float32", ok=True, configs={}, placeholders=PLACEHOLDERS)
    with pytest.raises(PackagingError, match="clash"):
        build_forward(wrapper, lowering, ["arg1_1"])
