"""What a trial that fails where others pass is blamed on: its inputs, or the way the call ran.

A shape's trials differ in what they draw (the problem's own inputs, signed ones, wide ones, a small or
large magnitude) and in how the call runs (grad mode, unpoisoned memory, earlier calls). A failure
only where no passing trial drew such inputs is a numerics problem and is named for the inputs; one
where the inputs also passed in another trial is the call mode, which a kernel that tells checked calls
from production shows exactly there.
"""

from __future__ import annotations

from typing import Any

from xe_forge.verify import protocol as p
from xe_forge.verify.models import CorrectnessReport, Finding


def blame_modes(report: CorrectnessReport, todo: list[Any], plans_: dict[str, p.CallPlan]) -> None:
    """Where a shape's trials pass in one way of running and fail in another (grad mode, unpoisoned memory,
    a late call), name the way: a kernel that tells checked calls from production fails exactly there."""
    if not any(t.passed for t in report.trials):
        return
    by_label = {t.label: t for t in todo}

    def drawn(label: str) -> tuple[str, str] | None:
        plan = by_label.get(label)
        return None if plan is None else (plan.dist, plan.scale)

    passing = {drawn(t.label) for t in report.trials if t.passed}
    for trial in report.trials:
        plan = by_label.get(trial.label)
        mode = _mode(plans_[plan.id]) if plan is not None and plan.id in plans_ else ""
        wrong = next((c for c in trial.comparisons if not c.passed), None)
        if trial.passed or wrong is None:
            continue
        detail = wrong.note or f"max_abs_err {wrong.max_abs_err:.3g}, {wrong.mismatches}/{wrong.numel} elements off"
        if plan is not None and drawn(trial.label) not in passing:  # no passing trial drew inputs like these
            kind = f"{plan.dist} inputs" + ("" if plan.scale == "unit" else f" at a {plan.scale} magnitude")
            trial.findings.append(Finding(check="inputs", message=f"{report.variant} {trial.label} is wrong on "
                                          f"{kind} ({wrong.name}: {detail}) where trials on other inputs pass",
                                          hint="real models' logits and activations sit far from 0 and vary in "
                                               "scale: subtract a row's max before exp, compute a variance about "
                                               "the mean (two passes or Welford), accumulate in fp32"))
            continue
        if not mode:
            continue
        trial.findings.append(Finding(check="call-mode", message=f"{report.variant} {trial.label} ran {mode}, as "
                                         f"production may, and is wrong there ({wrong.name}: {detail}) where other "
                                         "calls pass", hint="compute the same whatever the grad mode, the parameters' "
                                         "requires_grad, the memory a buffer starts with and the number of "
                                         "earlier calls; in eval mode, what the reference computes there (or raise NotImplementedError)"))


def _mode(call: p.CallPlan) -> str:
    """What in a call's run differs from the default (no_grad, poisoned, first call), in words."""
    grad = {"on": "with grad enabled" + (" and inputs requiring grad" if call.input_grad else ""),
            "inference": "under torch.inference_mode"}.get(call.grad)
    parts = ([grad] if grad else []) + ([] if call.poison else ["on unpoisoned memory"])
    parts += [f"after {call.warm} earlier calls of the same model"] if call.warm else []
    parts += ["with its parameters frozen (requires_grad False)"] if call.frozen else []
    parts += ["in eval mode (model.eval())"] if call.eval else []
    return ", ".join(parts)
