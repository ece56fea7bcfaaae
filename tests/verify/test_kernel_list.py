"""The GPU kernel list's bookkeeping, as far as the CPU shows it: one profiler session per check, never
paused, each kernel owned by the checked call whose range encloses its launch (the harness's own work
between calls owned by nobody), and each shape's foreign kernels landing on that shape's report."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from xe_forge.verify import protocol as p
from xe_forge.verify.kernel_list import CALL_LABEL, HARNESS, TRITON_LABEL, KernelSession, _call_of, foreign_kernels
from xe_forge.verify.models import CorrectnessReport
from xe_forge.verify.trials import ShapeCheck


def test_one_session_tags_each_op_with_its_call():
    session = KernelSession()
    x = torch.ones(8)
    with session.collect("main/t0") as off:
        assert off == ""
        (x * 2).sum()
    torch.mm(torch.ones(4, 4), torch.ones(4, 4))  # the harness's work between calls
    with session.collect("unseen1/t0"):
        (x + 1).max()
    prof = session.prof
    assert session.finish() == ("checked", {})
    names = [e.name for e in prof.events()]
    assert CALL_LABEL + "main/t0" in names and CALL_LABEL + "unseen1/t0" in names
    assert "aten::mul" in names and "aten::add" in names
    # the session is never paused: the harness's ops between calls are recorded, and belong to no call
    assert [_call_of(e) for e in prof.events() if e.name == "aten::mm"] == [HARNESS]
    assert {_call_of(e) for e in prof.events() if e.name == "aten::add"} == {"unseen1/t0"}
    assert session.prof is None and session.finish() == ("", {})  # ended: the next check starts afresh


class _Runner:
    def __init__(self, reply: p.KernelListed) -> None:
        self.reply, self.asked = reply, []

    def call(self, req, kind):
        self.asked.append(req)
        return self.reply


def _check(reply: p.KernelListed) -> tuple[ShapeCheck, dict[str, CorrectnessReport]]:
    check = ShapeCheck.__new__(ShapeCheck)
    check.kernel_list, check.runner = True, _Runner(reply)
    reports = {key: CorrectnessReport(variant=label, dtype="bfloat16", rtol=1e-2, atol=1e-2)
               for key, label in (("main", "bench-gpu"), ("u1", "unseen 1"), ("u2", "unseen 2"))}
    check.listed = dict(reports)
    return check, reports


def test_foreign_kernels_fail_the_shape_whose_call_launched_them():
    check, reports = _check(p.KernelListed(status="checked", foreign={"u1/t0": ["ampere_sgemm_128x64_tn"],
                                                                      "": ["sm80_xmma_gemm"]}))
    check.judge_kernel_list()
    assert [type(r).__name__ for r in check.runner.asked] == ["KernelList"]
    assert reports["u1"].audit.foreign_kernels == ["ampere_sgemm_128x64_tn"] and not reports["u1"].passed
    assert "unseen 1: GPU kernels launched by neither" in reports["u1"].findings[0].message
    assert reports["main"].audit.foreign_kernels == ["sm80_xmma_gemm"]  # linked to no call: the first shape's
    assert reports["u2"].passed and all(r.audit.kernel_list == "checked" for r in reports.values())
    check.judge_kernel_list()  # judged once: the session is over
    assert len(check.runner.asked) == 1


def test_a_clean_list_fails_nothing_and_says_it_was_checked():
    check, reports = _check(p.KernelListed(status="checked"))
    check.judge_kernel_list()
    assert all(r.passed and r.audit.kernel_list == "checked" for r in reports.values())


def test_no_kernel_list_asks_nothing():
    check, _ = _check(p.KernelListed(status="checked"))
    check.kernel_list = False
    check.judge_kernel_list()
    assert check.runner.asked == []


def test_runner_requests_include_the_kernel_list():
    req = p.RUNNER_REQUESTS.validate_python({"op": "kernel_list"})
    assert isinstance(req, p.KernelList) and SimpleNamespace(op=req.op).op == "kernel_list"


def _op(name, parent=None, kernels=()):
    return SimpleNamespace(name=name, cpu_parent=parent, kernels=[SimpleNamespace(name=k) for k in kernels],
                           device_type="DeviceType.CPU", is_user_annotation=False)


def _device(name):
    return SimpleNamespace(name=name, cpu_parent=None, kernels=[], device_type="DeviceType.CUDA",
                           is_user_annotation=False)


def test_foreign_kernels_by_the_call_that_launched_them():
    """What the GPU profile of one session looks like, built by hand: a GEMM launched in call u1 under an op
    its audit did not accept is that call's; the same GEMM launched by the harness between calls, a Triton
    kernel under its launch range, and an accepted convolution are nobody's finding."""
    call_m, call_u = _op(CALL_LABEL + "main/t0"), _op(CALL_LABEL + "u1/t0")
    launch = _op(TRITON_LABEL + "fused_kernel", call_m)
    events = [call_m, call_u, launch,
              _op("cuLaunchKernel", launch, ["fused_kernel"]),
              _op("aten::convolution", call_m, ["cudnn_conv_kernel"]),
              _op("aten::mm", call_u, ["sm90_xmma_gemm_bf16"]),
              _op("aten::mm", None, ["sm90_xmma_gemm_bf16", "harness_only_fill"]),  # between calls
              _device("fused_kernel"), _device("cudnn_conv_kernel"), _device("sm90_xmma_gemm_bf16"),
              _device("harness_only_fill"), _device("Memcpy DtoD (Device -> Device)")]
    accounts = {"main/t0": ({"convolution"}, {"fused_kernel"}), "u1/t0": (set(), set())}
    assert foreign_kernels(events, accounts) == {"u1/t0": ["sm90_xmma_gemm_bf16"]}
    # a kernel on the device that no op launched counts, whatever call was running
    assert foreign_kernels(events + [_device("ampere_sgemm_unlinked")], accounts) == {
        "u1/t0": ["sm90_xmma_gemm_bf16"], "": ["ampere_sgemm_unlinked"]}
    # a call that raised accounted for nothing: its launches are left to the failure it already is
    assert foreign_kernels(events, {"main/t0": accounts["main/t0"]}) == {}


def test_a_call_run_again_under_the_same_ids_is_judged_by_its_own_audit():
    """Seen on an H100 (2026-12-07): a shape's calls ran again under the same "shape/call" ids, the later
    (unpoisoned) call's audit replaced the earlier one's, and the earlier call's poison fills were
    reported as foreign. Each run of a call gets a tag of its own."""
    session = KernelSession()
    first, again = session.fresh_tag("main/t0"), session.fresh_tag("main/t0")
    assert first != again and first.split("/", 1)[0] == again.split("/", 1)[0] == "main"
    fill = "vectorized_elementwise_kernel<8, FillFunctor<BFloat16>>"
    call_1, call_2 = _op(CALL_LABEL + first), _op(CALL_LABEL + again)
    events = [call_1, call_2, _op("aten::fill_", call_1, [fill]), _device(fill)]
    accounts = {first: ({"fill_"}, set()), again: (set(), set())}
    assert foreign_kernels(events, accounts) == {}
    session.finish()
    assert session.fresh_tag("main/t0") == first  # a new check numbers afresh
