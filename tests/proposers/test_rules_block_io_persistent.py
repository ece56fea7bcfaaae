"""tensor-descriptors (block_io) and persistent-loop (persistent): applied to GEMM seeds, checked by
running the candidates under the interpreter, and refused with the construct named where they cannot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))  # rules_harness: a uniquely named helper
import rules_harness as h  # noqa: E402  (sets TRITON_INTERPRET before triton kernels are defined)
import torch  # noqa: E402

from xe_forge.proposers.rules import propose_rules  # noqa: E402
from xe_forge.targets.base import Toolchain  # noqa: E402

CUDA = Toolchain(name="triton", version="3.6.0")
DOT = ["the kernel uses tl.dot"]


def run(source: str, recipe: str, stage: str) -> tuple[list, list[str]]:
    entry = {"id": "e", "kind": "recipe", "recipe": {"name": recipe, "params": {}, "preconditions": DOT}}
    found, skips = propose_rules(source, stage=stage, target="nvidia-sm90", toolchain=CUDA, recipes=[entry],
                                 config_spaces=[])
    return found, [s.reason for s in skips]


def descriptors(source: str) -> str:
    found, reasons = run(source, "tensor-descriptors", "block_io")
    assert found, reasons
    return found[0].code


def test_descriptor_twin_reads_the_same_tiles_and_the_pointer_kernel_stays(tmp_path: Path) -> None:
    code = descriptors(h.fixture_source("gemm_literal"))
    assert "a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], " \
           "block_shape=[BLOCK_M, BLOCK_K])" in code
    assert "b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1]" in code
    assert "a = a_desc.load([(pid_m * BLOCK_M), k])" in code and "if _tma_ready(a, b):" in code
    module = h.check(code, tmp_path)
    a, b = torch.randn(33, 72).half(), torch.randn(40, 72).half().t()  # b not contiguous: the pointer kernel
    torch.testing.assert_close(module.Model()(a, b), a.float() @ b.float(), atol=1e-3, rtol=1e-3)


def test_weights_in_linear_layout_load_transposed(tmp_path: Path) -> None:
    code = descriptors(h.fixture_source("gemm_shared_grid").replace("w_ptr + (k + rk)[:, None] * N + rn[None, :]",
                                                                    "w_ptr + (k + rk)[:, None] + rn[None, :] * K")
                       .replace("torch.randn(k, n).half()", "torch.randn(n, k).half()")
                       .replace("N = self.weight.shape[1]", "N = self.weight.shape[0]")
                       .replace("x.float() @ model.weight.float()", "x.float() @ model.weight.float().t()"))
    assert "w_desc = tl.make_tensor_descriptor(w_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])" in code
    assert ".load([(pid_n * BLOCK_N), k]).T" in code
    h.check(code, tmp_path)


def test_advanced_pointer_tensors_are_followed(tmp_path: Path) -> None:
    source = h.fixture_source("gemm_literal").replace(
        "    for k in range(0, K, BLOCK_K):\n        a_mask = (offs_m[:, None] < M) & ((k + offs_k)[None, :] < K)\n"
        "        b_mask = ((k + offs_k)[:, None] < K) & (offs_n[None, :] < N)\n"
        "        a = tl.load(a_ptr + offs_m[:, None] * stride_am + (k + offs_k)[None, :] * stride_ak, mask=a_mask, other=0.0)\n"
        "        b = tl.load(b_ptr + (k + offs_k)[:, None] * stride_bk + offs_n[None, :] * stride_bn, mask=b_mask, other=0.0)\n",
        "    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak\n"
        "    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn\n"
        "    for k in range(0, tl.cdiv(K, BLOCK_K)):\n"
        "        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)\n"
        "        a_ptrs += BLOCK_K * stride_ak\n        b_ptrs += BLOCK_K * stride_bk\n")
    assert "a_ptrs +=" in source
    code = descriptors(source)
    twin = code.split("def matmul_kernel_tma")[1].split("class Model")[0]
    assert "a_desc.load([(pid_m * BLOCK_M), k * BLOCK_K])" in twin and "a_ptrs" not in twin
    h.check(code, tmp_path)


@pytest.mark.parametrize(("edit", "reason"), [
    (("a_ptr + offs_m[:, None] * stride_am", "a_ptr + tl.load(a_ptr + offs_m)[:, None] * stride_am"),
     "is not an offset vector"),
    (("mask=a_mask, other=0.0)", "mask=a_mask, other=1.0)"), "pads with `1.0`"),
    (("a.stride(0), a.stride(1)", "*a.stride()"), "passes *args/**kwargs"),
])
def test_descriptor_refusals_name_the_construct(edit: tuple[str, str], reason: str) -> None:
    found, reasons = run(h.fixture_source("gemm_literal").replace(*edit), "tensor-descriptors", "block_io")
    assert not found and reason in reasons[0]


def test_descriptors_need_to_know_which_stride_is_one() -> None:
    source = h.fixture_source("gemm_literal").replace("a.stride(0), a.stride(1)", "sa, sb").replace(
        "        c = torch.empty(", "        sa, sb = a.stride()\n        c = torch.empty(")
    found, reasons = run(source, "tensor-descriptors", "block_io")
    assert not found and "cannot tell which dim of the tile" in reasons[0]


def test_persistent_loop_keeps_grouped_order_and_hoists_setup(tmp_path: Path) -> None:
    swizzle = {"id": "s", "kind": "recipe", "recipe": {"name": "group-swizzle", "params": {"GROUP_SIZE_M": 2}}}
    grouped = propose_rules(h.fixture_source("gemm_literal"), stage="persistent", target="nvidia-sm90",
                            toolchain=CUDA, recipes=[swizzle], config_spaces=[])[0][0].code
    found, reasons = run(grouped, "persistent-loop", "persistent")
    assert found, reasons
    code = found[0].code
    assert "for tile_id in tl.range(tl.program_id(0), num_tiles, tl.num_programs(0)):\n        pid = tile_id" in code
    assert code.index("num_pid_in_group = GROUP_SIZE_M * num_pid_n") < code.index("for tile_id")
    assert "(min(_program_slots(a.device), (triton.cdiv(M, 32) * triton.cdiv(N, 32))),)" in code
    h.check(code, tmp_path)


def test_persistent_loop_on_a_2d_grid_and_its_refusals(tmp_path: Path) -> None:
    found, _ = run(h.fixture_source("gemm_literal"), "persistent-loop", "persistent")
    assert "pid_m = tile_id // tl.cdiv(N, BLOCK_N)" in found[0].code
    h.check(found[0].code, tmp_path)
    early = h.fixture_source("gemm_literal").replace("    acc = tl.zeros(", "    if pid_m > 1000:\n        return\n"
                                                                             "    acc = tl.zeros(")
    assert "returns early" in run(early, "persistent-loop", "persistent")[1][0]


def test_bundled_entries_are_gated_by_the_toolchain_version() -> None:
    from xe_forge.kb import load_kb

    kb = load_kb()
    old = Toolchain(name="triton", version="3.3.0")
    entries = [e.model_dump(mode="json", exclude_none=True) for e in kb.filter(stage="block_io", kind="recipe",
                                                                               target="nvidia-sm90")]
    found, skips = propose_rules(h.fixture_source("gemm_literal"), stage="block_io", target="nvidia-sm90",
                                 toolchain=old, recipes=entries, config_spaces=[])
    assert not found and "entry needs triton>=3.4; this run has triton 3.3.0" in skips[0].reason


@pytest.mark.parametrize(("version", "said"), [
    ("3.7.0", "only with TRITON_INTEL_ENABLE_BLOCK_IO_ALL_LAYOUTS=1, which a kernel file cannot set"),
    ("3.6.0", "[xpu-block-io-all-layouts-off]"),
    ("3.7.2", "block I/O without a rewrite [xpu-block-io-all-layouts]"),
])
def test_a_kernel_without_dots_is_told_what_its_toolchain_does_for_its_loads(version: str, said: str) -> None:
    entry = {"id": "e", "kind": "recipe", "recipe": {"name": "tensor-descriptors", "params": {}, "preconditions": DOT}}
    found, skips = propose_rules(h.fixture_source("softmax_rows"), stage="block_io", target="intel-xe2",
                                 toolchain=Toolchain(name="triton-xpu", version=version), recipes=[entry],
                                 config_spaces=[])
    assert not found and said in skips[0].reason
    assert "precondition 'the kernel uses tl.dot' does not hold" in skips[0].reason


def test_no_block_io_note_for_dot_kernels_or_nvidia() -> None:
    _, reasons = run(h.fixture_source("softmax_rows"), "tensor-descriptors", "block_io")
    assert "TRITON_INTEL" not in reasons[0] and "block I/O" not in reasons[0]
