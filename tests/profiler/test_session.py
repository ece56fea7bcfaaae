"""`optimize --profile` from the pipeline's side: profiles cached per kernel and kept in the run
directory, the machine's refusal asked only once, and what the hooks hand to the plan, the prompts,
the rules engine and the report."""

from __future__ import annotations

from types import SimpleNamespace

from xe_forge.kb import load_kb
from xe_forge.pipeline.report import RunReport, render_html, render_markdown
from xe_forge.profile import report
from xe_forge.profile import session as hooks
from xe_forge.profile.session import ProfileSession
from xe_forge.profile.steer import SteeredRules
from xe_forge.proposers.rules.proposer import RulesProposer
from xe_forge.targets.base import Toolchain

CUDA = Toolchain(name="triton", version="3.6.0")


def _ctx(problem, tmp_path, **kw):
    session = ProfileSession(problem, device="cuda", target="nvidia-sm90", run_dir=tmp_path / "run")
    fields = {"rules": None, "target": "nvidia-sm90", "toolchain": CUDA, "progress": None, "only_stages": None} | kw
    return SimpleNamespace(profiler=session, **fields)


def test_one_profile_per_distinct_kernel_kept_in_the_run_directory(gemm_problem, fake, tmp_path):
    fake.steps({"log": "ncu_raw_gemm_seed.csv"})
    ctx = _ctx(gemm_problem, tmp_path)
    code = gemm_problem.kernel.source
    hooks.on_input(ctx, code)
    assert "limiter: latency/occupancy-bound" in hooks.stage_feedback(ctx, code, "dtype")
    assert len(fake.calls) == 1  # the same code is profiled once
    saved = list((tmp_path / "run" / "profiles").glob("*.json"))
    assert len(saved) == 1 and (tmp_path / "run" / "profiles" / saved[0].name.replace(".json", ".raw.txt")).is_file()
    resumed = _ctx(gemm_problem, tmp_path)  # a resumed run reads the profile back
    assert hooks.stage_feedback(resumed, code, "dtype") and len(fake.calls) == 1


def test_a_machine_that_refuses_counters_is_asked_once(gemm_problem, fake, tmp_path):
    fake.steps({"stdout": "ncu_err_perm.txt", "exit": 1})
    ctx = _ctx(gemm_problem, tmp_path)
    hooks.on_input(ctx, gemm_problem.kernel.source)
    assert hooks.stage_feedback(ctx, gemm_problem.kernel.source + "\n# changed\n", "dtype") == ""
    assert len(fake.calls) == 1
    plan = ["dtype", "device_tuning"]
    assert hooks.steer_planned(ctx, plan, gemm_problem.kernel.source, lambda s: True) == plan  # unknown: unchanged


def test_without_profile_the_hooks_change_nothing(gemm_problem):
    ctx = SimpleNamespace(profiler=None, rules=object(), only_stages=None)
    proposers = [ctx.rules]
    assert hooks.stage_proposers(ctx, "code", "dtype", proposers) is proposers
    assert hooks.stage_feedback(ctx, "code", "dtype") == ""
    assert hooks.steer_planned(ctx, ["dtype"], "code", lambda s: True) == ["dtype"]
    assert report.markdown(None) == [] and report.png(None) is None


def test_the_limiter_steers_plan_and_rules_and_the_report_shows_it(gemm_problem, fake, tmp_path):
    fake.steps({"log": "ncu_raw_spills.csv"})
    rules = RulesProposer(load_kb(), "nvidia-sm90", CUDA)
    ctx = _ctx(gemm_problem, tmp_path, rules=rules)
    code = gemm_problem.kernel.source
    assert hooks.steer_planned(ctx, ["dtype", "persistent"], code, lambda s: True)[:2] == ["device_tuning",
                                                                                         "autotuning"]
    ctx.only_stages = ["dtype"]
    assert hooks.steer_planned(ctx, ["dtype"], code, lambda s: True) == ["dtype"]  # the user's --stages rule
    llm = object()
    steered = hooks.stage_proposers(ctx, code, "device_tuning", [rules, llm])
    assert isinstance(steered[0], SteeredRules) and steered[1] is llm
    from xe_forge.proposers.base import StageRequest
    from xe_forge.stages import load_stages

    first = steered[0].next(StageRequest(stage=load_stages()["device_tuning"], code=code, reference=""))
    assert first.entry_id == "profile:spill-bound:launch-options"
    summary = ctx.profiler.summary(code)
    assert summary.steering[0].changed_first and summary.entries[0].diagnosis.limiter == "spill-bound"
    assert summary.model_dump(mode="json")["steering"][0]["changed_first"]  # report.json carries it
    md = "\n".join(report.markdown(summary))
    assert "| input | spill-bound |" in md and "made `launch-options [profile:spill-bound:launch-options]`" in md
    assert "![roofline](roofline.png)" in md
    roofline = report.png(summary)
    assert roofline.startswith(b"\x89PNG")
    run_report = RunReport(run_id="r", status="improved", kernel="k.py", reference="r.py", reference_is_self=False,
                           device="cuda", target="nvidia-sm90", toolchain="triton 3.6.0", engine="rules", speed="-",
                           profile=summary)
    back = RunReport.model_validate_json(run_report.model_dump_json())  # report.json read back (OptimizeResult)
    assert back.profile == summary and "## Profile" in render_markdown(back)
    assert 'alt="roofline"' in render_html(back, None, roofline) and 'alt="roofline"' not in render_html(back, None)
    assert (tmp_path / "run" / "profiles" / "steering.json").is_file()
    resumed = _ctx(gemm_problem, tmp_path)  # a resumed run keeps the notes of the stages already run
    assert resumed.profiler.steering == ctx.profiler.steering
