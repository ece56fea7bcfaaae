"""The GPU kernel list's bookkeeping, as far as the CPU shows it: one profiler session per check that
records only inside checked calls, and each shape's foreign kernels landing on that shape's report."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from xe_forge.verify import protocol as p
from xe_forge.verify.kernel_list import CALL_LABEL, KernelSession, _call_of
from xe_forge.verify.models import CorrectnessReport
from xe_forge.verify.trials import ShapeCheck


def test_one_session_records_only_inside_checked_calls():
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
    # host ops between calls are seen (only GPU collection is switched off) but belong to no call
    assert [_call_of(e) for e in prof.events() if e.name == "aten::mm"] == [""]
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
