"""A verdict's one-line summary (printed by `xe-forge port` as `PORTED passed (...)`, kept as each
candidate's summary in the run reports) and its feedback name what the ratio was timed against."""

from __future__ import annotations

from xe_forge.verify.models import Timing, Verdict


def _timing(speedup: float) -> Timing:
    return Timing(candidate_ms=1.0, baseline_ms=speedup, speedup=speedup, spread=0.01, margin=0.02,
                  faster=speedup > 1.02, reps=40)


def test_a_passed_summary_names_the_baseline_of_its_ratio():
    eager, compiled = _timing(0.5), _timing(0.25)
    verdict = Verdict(passed=True, timings={"eager": eager, "torch.compile": compiled}, timing=eager,
                      speed_measured=True)
    assert verdict.summary() == "passed (kernel vs eager PyTorch: 0.500x)"
    stage = Verdict(passed=True, timings={"input kernel": _timing(2.0)}, speed_measured=True)
    stage.timing = stage.timings["input kernel"]
    assert stage.summary() == "passed (kernel vs input kernel: 2.000x)"
    assert "vs input kernel 2.0000 ms" in stage.feedback()


def test_an_untimed_summary_says_why_without_a_figure():
    assert Verdict(passed=True, speed_note="speed not measured on the CPU").summary() == \
        "passed (speed not measured on the CPU)"
    assert Verdict(passed=True).summary() == "passed (speed not measured)"
