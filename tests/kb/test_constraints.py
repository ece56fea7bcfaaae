"""Static constraint checks on candidate sources, with the entry id in every reason."""

from __future__ import annotations

import textwrap

import pytest

from xe_forge.kb import check_constraints

from .helpers import TRITON_39, XPU_35, XPU_36, XPU_372

LAUNCH = """
import triton
import triton.language as tl

def run(x, out, n):
    _kernel[(n,)](x, out, n, BLOCK=1024, {options})
"""


def _check(source: str, bundled, target="intel-xe2", toolchain=XPU_372):
    return check_constraints(textwrap.dedent(source), target=target, toolchain=toolchain, kb=bundled)


def _ids(violations):
    return {v.entry_id for v in violations}


def test_legal_launch_passes(bundled):
    assert _check(LAUNCH.format(options="num_warps=32, grf_mode='256', num_stages=2"), bundled) == []


def test_grf_mode_unknown_to_the_toolchain(bundled):
    old_name = _check(LAUNCH.format(options="grf_mode='large'"), bundled)
    assert _ids(old_name) == {"xpu-grf-mode-names-3-7-2"}
    assert old_name[0].line == 6 and "[xpu-grf-mode-names-3-7-2]" in old_name[0].message
    new_name = _check(LAUNCH.format(options="grf_mode='256'"), bundled, toolchain=XPU_35)
    assert _ids(new_name) == {"xpu-grf-mode-names-pre-3-6"}


def test_grf_256_with_64_warps(bundled):
    found = _check(LAUNCH.format(options="num_warps=64, grf_mode='256'"), bundled)
    assert _ids(found) == {"xpu-grf-large-max-32-warps"}
    assert "num_warps=64" in found[0].message
    assert _check(LAUNCH.format(options="num_warps=64, grf_mode='128'"), bundled) == []


def test_non_power_of_two_warps(bundled):
    found = _check(LAUNCH.format(options="num_warps=12"), bundled)
    assert _ids(found) == {"num-warps-power-of-two"} and "[num-warps-power-of-two]" in found[0].message


def test_warps_above_the_nvidia_limit_and_intel_options_on_cuda(bundled):
    found = _check(LAUNCH.format(options="num_warps=64, grf_mode='256'"), bundled, target="nvidia-sm90",
                   toolchain=TRITON_39)
    assert _ids(found) == {"nvidia-num-warps-max-32", "nvidia-no-grf-mode"}


def test_block_pointers_on_triton_3_9(bundled):
    source = """
    import triton.language as tl
    from triton.language import advance as move

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        p = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
        p = move(p, (BLOCK,))
    """
    found = _check(source, bundled, target="nvidia-sm90", toolchain=TRITON_39)
    assert [(v.entry_id, v.line) for v in found] == [("block-ptr-removed-triton-3-9", 7),
                                                     ("block-ptr-removed-triton-3-9", 8)]
    assert _check(source, bundled, target="intel-xe2", toolchain=XPU_372) == []  # still present in 3.7.2


def test_triton_config_kwargs_and_keywords_are_read(bundled):
    source = """
    import triton
    configs = [
        triton.Config({"BLOCK_M": 256, "grf_mode": "256"}, num_warps=64, num_stages=2),
        triton.Config({"BLOCK_M": 128}, num_warps=8, grf_mode="256"),
    ]
    """
    found = _check(source, bundled)
    assert ("xpu-grf-large-max-32-warps", 4) in [(v.entry_id, v.line) for v in found]
    assert ("grf-mode-not-a-config-keyword", 5) in [(v.entry_id, v.line) for v in found]


def test_threads_per_warp_renamed(bundled):
    assert _ids(_check(LAUNCH.format(options="threads_per_warp=16"), bundled)) == {"xpu-threads-per-warp-removed"}
    assert _check(LAUNCH.format(options="threads_per_warp=16"), bundled, toolchain=XPU_35) == []


def test_non_literal_options_are_not_guessed(bundled):
    assert _check(LAUNCH.format(options="num_warps=warps, **opts"), bundled) == []


def test_syntax_error_is_one_violation(bundled):
    found = _check("def broken(:\n", bundled)
    assert _ids(found) == {"python-syntax"} and found[0].line == 1


def test_bundled_examples_break_no_constraint(bundled):
    for entry in bundled.filter(kind="example"):
        source = entry.example_file().read_text()
        for target, toolchain in (("intel-xe2", XPU_372), ("nvidia-sm90", TRITON_39)):
            assert _check(source, bundled, target=target, toolchain=toolchain) == [], entry.id


def test_device_branches_are_checked_only_for_their_vendor(bundled):
    source = """
    def run(x, n):
        if x.device.type == "xpu":
            _kernel[(n,)](x, n, num_warps=32, grf_mode="256")
        elif x.device.type == "cuda":
            _kernel[(n,)](x, n, num_warps=8, maxnreg=128)
        else:
            _kernel[(n,)](x, n, num_warps=8, grf_mode="large")
    """
    on_intel = _check(source, bundled)
    assert [(v.entry_id, v.line) for v in on_intel] == [("xpu-grf-mode-names-3-7-2", 8)]
    on_nvidia = _check(source, bundled, target="nvidia-sm90", toolchain=TRITON_39)
    assert [(v.entry_id, v.line) for v in on_nvidia] == [("nvidia-no-grf-mode", 8)]


# version-specific options (issue 16): the verifier's static pass names the entry ----------------

@pytest.mark.parametrize(("options", "toolchain", "entry"), [
    ("advanced_path=True", XPU_36, "xpu-advanced-path-removed-3-6"),
    ("split_barriers_scope='Workgroup'", XPU_372, "xpu-split-barriers-scope-removed-3-7"),
    ("use_barrier=True", XPU_36, "xpu-use-barrier-unknown-pre-3-7"),
    ("launch_pdl=True", XPU_372, "xpu-launch-keywords-3-7"),
    ("generate_native_code=True", TRITON_39, "triton-launch-keywords-3-6"),
])
def test_wrong_version_launch_options_name_their_entry(bundled, options, toolchain, entry):
    target = "nvidia-sm90" if toolchain.name == "triton" else "intel-xe2"
    found = _check(LAUNCH.format(options=options), bundled, target=target, toolchain=toolchain)
    assert [(v.entry_id, v.line) for v in found] == [(entry, 6)]
    assert found[0].message.startswith(f"[{entry}]")


def test_version_options_in_config_kwargs_are_checked_too(bundled):
    source = """
    import triton
    configs = [triton.Config({"BLOCK": 64, "split_barriers_scope": "Subgroup"}, num_warps=8)]
    """
    assert _ids(_check(source, bundled)) == {"xpu-split-barriers-scope-removed-3-7"}
    assert _check(source, bundled, toolchain=XPU_36) == []


def test_the_right_version_passes(bundled):
    assert _check(LAUNCH.format(options="advanced_path=True, split_barriers_scope='Workgroup'"), bundled,
                  toolchain=XPU_35) == []
    assert _check(LAUNCH.format(options="use_barrier=True"), bundled) == []


def test_kernel_parameters_named_like_options_are_not_judged(bundled):
    source = """
    import triton
    import triton.language as tl

    @triton.jit
    def _kernel(x_ptr, n, launch_pdl: tl.constexpr, BLOCK: tl.constexpr):
        pass

    def run(x, n):
        _kernel[(n,)](x, n, launch_pdl=1, BLOCK=1024, num_warps=8)
    """
    assert _check(source, bundled) == []


def test_the_evaluator_rejects_a_removed_option_before_running_anything():
    from xe_forge.verify.evaluate import Evaluator

    source = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    class Model(torch.nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            _copy[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024, advanced_path=True)
            return y
    ''')
    with Evaluator("cpu", "intel-xe2") as evaluator:  # the CPU prepares for triton-xpu 3.7.2
        findings = evaluator.static_findings(source, [])
    assert [f.check for f in findings] == ["constraint"]
    assert findings[0].message.startswith("[xpu-advanced-path-removed-3-6]")
