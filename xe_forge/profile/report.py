"""The run report's profile section: each profiled kernel's limiter, the roofline plot, and where the
limiter changed the rules engine's next candidate."""

from __future__ import annotations

from typing import Any

from xe_forge.profile.models import RooflinePoint
from xe_forge.profile.plot import roofline_png
from xe_forge.profile.session import ProfileEntry, active_session


def summary(ctx: Any, final_code: str | None) -> dict[str, Any] | None:
    """report.json's `profile` key (None without --profile): profiles the output if it is new."""
    session = active_session(ctx)
    if session is None:
        return None
    if final_code:
        session.entry(final_code, "output")
    session.save_steering()
    return {"device": session.device, "target": session.target,
            "entries": [e.model_dump(mode="json") for e in session.entries.values()],
            "steering": [n.model_dump() | {"changed_first": n.changed_first} for n in session.steering]}


def markdown(profile: dict[str, Any] | None) -> list[str]:
    if not profile:
        return []
    lines = ["", "## Profile", "", "| kernel file | limiter | us per call | % of roof | dominant kernel | why |",
             "|---|---|---|---|---|---|"]
    for raw in profile["entries"]:
        e = ProfileEntry(**raw)
        point = e.diagnosis.roofline
        time = f"{point.time_us:.1f}" if point else "-"
        roof = f"{point.fraction_of_roof:.0%}" if point and point.fraction_of_roof is not None else "-"
        why = e.record.unavailable and f"unavailable: {e.record.unavailable}"
        lines.append(f"| {e.label} | {e.diagnosis.limiter} | {time} | {roof} | {e.diagnosis.kernel or '-'} | "
                     f"{_cell(why or '; '.join(e.diagnosis.reasons))} |")
    changed = [n for n in profile["steering"] if n["changed_first"]]
    for n in changed:
        lines.append(f"- {n['stage']}: the {n['limiter']} limiter made `{n['steered'][0]}` the first candidate "
                     f"(without it: `{n['unsteered'][0] if n['unsteered'] else 'none'}`)")
    if any(ProfileEntry(**raw).diagnosis.roofline for raw in profile["entries"]):
        lines += ["", "![roofline](roofline.png)"]
    return lines


def png(profile: dict[str, Any] | None) -> bytes | None:
    if not profile:
        return None
    points = []
    for raw in profile["entries"]:
        e = ProfileEntry(**raw)
        if isinstance(e.diagnosis.roofline, RooflinePoint):
            points.append((f"{e.label} ({e.diagnosis.limiter})", e.diagnosis.roofline))
    return roofline_png(points, f"roofline on {profile['target']}")


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "/").split())
