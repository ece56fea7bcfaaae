"""Class 4: torch doing the work is seen at the dispatch level, on every call, whatever the spelling.

The audit counts every aten operation of every call (checked, ghost, and sampled timed calls):
views and movement are free, compute outside Triton must fall under a declared allowance, and the
allowance covers exactly what it names (a torch.nn submodule or a torch function), no more than the
input kernel itself delegates. Attacks the static scan refuses run with it switched off.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from xe_forge.verify.audit import WorkAudit, audit_call, normalise
from xe_forge.verify.evaluate import Evaluator, input_allowance
from xe_forge.verify.kernel_list import foreign_kernels
from xe_forge.verify.static import check_source

from .helpers import failed, finding, problem, source, unguarded

# spellings no name-based scan sees: only the dispatch-level audit can tell
UNSEEN_BY_NAME = {"audit/builtin_sum.py": "mul", "audit/addr_outer.py": "addr_"}
# spellings the static scan refuses; switched off, the audit alone still refuses them (a module kept in a
# container is outside the host subset: modules are reached by their dotted names only)
REFUSED_BY_NAME = {"audit/disable_function_mode.py": "mm", "audit/hook_in_init.py": "addmm",
                   "audit/container_alias.py": "mm"}
# (the hook runs after forward, so ghost replay sees the right answer too and is named first)


@pytest.mark.parametrize("path", sorted(UNSEEN_BY_NAME))
def test_torch_work_no_name_shows_is_refused_at_run_time(path: str, evaluator: Evaluator, linear):
    assert check_source(source(path)).findings == []
    verdict = evaluator.evaluate(source(path), linear)
    failed(verdict, "audit")
    assert UNSEEN_BY_NAME[path] in finding(verdict, "torch-compute").message


@pytest.mark.parametrize("path", sorted(REFUSED_BY_NAME))
def test_the_audit_holds_without_the_static_scan(path: str, evaluator: Evaluator, linear):
    assert check_source(source(path)).findings, "the static scan refuses it first"
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source(path), linear)
    assert not verdict.passed and verdict.stage_failed in ("audit", "ghost"), verdict.feedback()
    assert REFUSED_BY_NAME[path] in finding(verdict, "torch-compute").message


def test_tensor_data_handed_to_host_numpy_is_refused_on_any_device(evaluator: Evaluator, linear):
    """numpy is outside the host subset; with the scan off, the audit still sees the data leave."""
    assert "numpy" in check_source(source("audit/numpy_host.py")).findings[0].message
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("audit/numpy_host.py"), linear)
    failed(verdict, "audit")
    assert "numpy" in finding(verdict, "host-compute").message


def test_a_cuda_kernel_no_aten_op_launches_is_refused_statically_here_and_by_the_kernel_list_on_gpus():
    """benchmarks/verifier_gpu.py runs it on CUDA with the scan off: the profiler's kernel list flags it."""
    found = check_source(source("audit/jiterator_epilogue.py")).findings
    assert [f.check for f in found] == ["sandbox"] and "jiterator" in found[0].message


def test_an_allowance_allows_exactly_what_it_names(evaluator: Evaluator):
    conv = problem("conv")
    allow = input_allowance(conv)
    assert evaluator.evaluate(source("conv/good.py"), conv, allow_torch=allow).passed
    verdict = evaluator.evaluate(source("audit/allowed_conv_plus_torch.py"), conv, allow_torch=allow)
    failed(verdict, "audit")
    message = finding(verdict, "torch-compute").message
    assert "mul" in message and "convolution" not in message


def test_a_submodule_named_like_the_allowance_is_not_the_allowance(evaluator: Evaluator):
    conv = problem("conv")
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("audit/fake_allowed_submodule.py"), conv, allow_torch={"self.conv"})
    failed(verdict, "audit")
    assert "convolution" in finding(verdict, "torch-compute").message


def test_allowed_work_beyond_what_the_input_kernel_delegates_is_refused(evaluator: Evaluator):
    conv = problem("conv")  # its input kernel, conv/good.py, runs the convolution once
    verdict = evaluator.evaluate(source("audit/allowed_twice.py"), conv, allow_torch=input_allowance(conv))
    failed(verdict, "audit")
    assert "input kernel" in finding(verdict, "torch-budget").message


def test_without_any_allowance_the_conv_itself_is_torch_compute(evaluator: Evaluator):
    conv = problem("conv")
    with unguarded(evaluator):
        verdict = evaluator.evaluate(source("conv/good.py"), conv)
    failed(verdict, "audit")
    assert "convolution" in finding(verdict, "torch-compute").message


# ---------------------------------------------------------------- the audit itself


def test_views_movement_and_allocation_are_free_and_compute_is_counted():
    model = torch.nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with audit_call(model, [], on_gpu=False) as audit:
        y = torch.cat([x, x]).view(4, 4).t().contiguous()
        torch.stack([y, y]).reshape(-1)
        torch.empty(3).fill_(1.0)
        torch.randn(3)
    assert audit.summary_.torch_flops == 0 and audit.summary_.compute_ops == {}
    assert audit.summary_.movement_bytes > 0
    with audit_call(model, [], on_gpu=False) as audit:
        model(x)
    assert audit.summary_.torch_flops == 2 * 2 * 4 * 4 and set(audit.summary_.compute_ops) == {"addmm"}


def test_a_copy_that_resolves_a_lazy_view_computes():
    """Red team 4, R2: `.view(complex64).conj().imag` copied is -x, and a float read as int16 halves
    copied is its truncation to bf16; views are free, the copy that materialises them is compute."""
    model = torch.nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with audit_call(model, [], on_gpu=False) as audit:
        pairs = torch.stack([torch.zeros_like(x), x], dim=-1).view(torch.complex64)
        negated = torch.empty(2, 4)
        negated.copy_(pairs.conj().imag.squeeze(-1))
    assert torch.equal(negated, -x), "the attack works: the copy negates"
    assert audit.summary_.torch_flops > 0 and "copy_ of a negative view" in audit.summary_.refused_ops
    with audit_call(model, [], on_gpu=False) as audit:
        x.view(torch.int16)[..., 1::2].clone()
    assert "clone of data read as torch.int16" in audit.summary_.refused_ops, audit.summary_.refused_ops
    with audit_call(model, [], on_gpu=False) as audit:
        x.t().contiguous().view(2, 4).clone()  # views of the same dtype stay movement
    assert audit.summary_.torch_flops == 0


def test_an_allowed_function_or_submodule_covers_its_own_work_only():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    x = torch.randn(2, 4)
    with audit_call(model, ["self.0"], on_gpu=False) as audit:
        model(x).sum()
    assert audit.summary_.allowed_flops == 64 and audit.summary_.compute_ops == {"addmm": 1, "sum": 1}
    assert audit.summary_.torch_flops == 8 and audit.summary_.refused_ops == {"sum": 1}  # nothing allowed it
    with audit_call(model, ["torch.mm"], on_gpu=False) as audit:
        torch.mm(x, x.t())
        x @ x.t()  # the same aten op, reached as the operator: allowed by the op's name
    assert audit.summary_.torch_flops == 0 and audit.summary_.allowed_flops == 2 * 2 * 2 * 4 * 2


def test_allowance_names_normalise_to_submodules_and_leaves():
    assert normalise(["self.conv", "F.conv2d", "torch.ops.aten.mm.default", "method:sum", "operator:@",
                      "torch.ops.aten.randint.low_out"]) == ({"conv"}, {"conv2d", "mm", "sum", "matmul", "randint"})


def test_device_to_host_copies_and_syncing_ops_are_recorded_on_gpus():
    audit = WorkAudit(set(), on_gpu=True)
    gpu, cpu = torch.empty(1, device="meta"), torch.empty(1)  # meta stands in for a device tensor
    assert audit._device_to_host("_local_scalar_dense", [gpu], None)  # .item()
    assert audit._device_to_host("_to_copy", [gpu], cpu)  # .cpu()
    assert not audit._device_to_host("_to_copy", [cpu], gpu)  # host to device is fine
    assert not audit._device_to_host("_local_scalar_dense", [cpu], None)


def _event(name, kernels=(), parent=None, device_type="CPU", is_user_annotation=False):
    return SimpleNamespace(name=name, kernels=[SimpleNamespace(name=k) for k in kernels], cpu_parent=parent,
                           device_type=device_type, is_user_annotation=is_user_annotation)


def test_gpu_kernels_are_accounted_to_triton_launches_or_accepted_ops():
    triton_range = _event("xe_forge.triton:_gemm_kernel")
    conv = _event("aten::cudnn_convolution")
    audit = WorkAudit(set(), on_gpu=True)
    audit.ok_ops = {"cudnn_convolution"}
    events = SimpleNamespace(events=lambda: [
        triton_range, conv,
        _event("cuLaunchKernelEx", ["_gemm_kernel"], triton_range),
        _event("cudaLaunchKernel", ["sm90_xmma_fprop_implicit_gemm"], conv),
        _event("cudaLaunchKernel", ["ampere_sgemm_128x64_tn"]),  # launched by nothing the audit saw
        _event("sm80_xmma_gemm_f32f32", device_type="DeviceType.CUDA"),  # a device event with no launcher
        # the profiler mirrors each record_function range on the GPU timeline (seen on an H200, torch 2.11):
        # a range, not a kernel
        _event("xe_forge.triton:_gemm_kernel", device_type="DeviceType.CUDA", is_user_annotation=True),
        _event("_gemm_kernel", device_type="DeviceType.CUDA"),  # the Triton kernel itself, by its name
    ])
    assert foreign_kernels(events, audit, {"_gemm_kernel"}) == ["ampere_sgemm_128x64_tn", "sm80_xmma_gemm_f32f32"]


def test_a_kernel_inside_an_op_nested_in_an_accepted_op_is_accounted():
    """The dispatch mode sees `_to_copy`; the profiler shows the `copy_` it calls, which launches the kernel."""
    outer = _event("aten::_to_copy")
    inner = _event("aten::copy_", parent=outer)
    audit = WorkAudit(set(), on_gpu=True)
    audit.ok_ops = {"_to_copy"}
    events = SimpleNamespace(events=lambda: [outer, inner, _event("cudaLaunchKernel", ["copy_kernel"], inner)])
    assert foreign_kernels(events, audit, set()) == []


def test_the_harness_launch_label_is_not_the_candidates_compute(monkeypatch: pytest.MonkeyPatch):
    """On a GPU every launch runs inside a named profiler range (hooks.count_launches(label=True)), which
    dispatches profiler ops from under Triton's launcher: they touch no tensor data and are nobody's
    compute (the H200 refused every honest kernel as `_record_function_enter_new` before this)."""
    import triton
    import triton.language as tl

    from xe_forge.verify.hooks import count_launches

    monkeypatch.setenv("TRITON_INTERPRET", "1")  # read when the kernel is defined

    @triton.jit
    def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

    x = torch.randn(100)
    y = torch.empty_like(x)
    with count_launches(label=True) as launches, audit_call(torch.nn.Identity(), [], on_gpu=False,
                                                            launches=launches) as audit:
        _double[(1,)](x, y, 100, BLOCK=128)
        y.add(1.0)  # the candidate's own torch work is still counted
    assert launches.count == 1 and torch.equal(y, x * 2.0)
    assert audit.summary_.compute_ops == {"add": 1}, audit.summary_.compute_ops
