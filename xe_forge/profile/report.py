"""The run report's profile section: each profiled kernel's limiter, the roofline plot, and where the
limiter changed the rules engine's next candidate (the ProfileSummary of a `--profile` run)."""

from __future__ import annotations

from xe_forge.profile.models import ProfileSummary
from xe_forge.profile.plot import roofline_png


def markdown(profile: ProfileSummary | None) -> list[str]:
    """report.md's `## Profile` lines ([] without --profile)."""
    if profile is None:
        return []
    lines = ["", "## Profile", "", "| kernel file | limiter | us per call | % of roof | dominant kernel | why |",
             "|---|---|---|---|---|---|"]
    for e in profile.entries:
        point = e.diagnosis.roofline
        time = f"{point.time_us:.1f}" if point else "-"
        roof = f"{point.fraction_of_roof:.0%}" if point and point.fraction_of_roof is not None else "-"
        why = e.record.unavailable and f"unavailable: {e.record.unavailable}"
        lines.append(f"| {e.label} | {e.diagnosis.limiter} | {time} | {roof} | {e.diagnosis.kernel or '-'} | "
                     f"{_cell(why or '; '.join(e.diagnosis.reasons))} |")
    for n in profile.steering:
        if n.changed_first:
            lines.append(f"- {n.stage}: the {n.limiter} limiter made `{n.steered[0]}` the first candidate "
                         f"(without it: `{n.unsteered[0] if n.unsteered else 'none'}`)")
    if any(e.diagnosis.roofline for e in profile.entries):
        lines += ["", "![roofline](roofline.png)"]
    return lines


def png(profile: ProfileSummary | None) -> bytes | None:
    """The roofline plot with one point per profiled kernel file; None when no point can be placed."""
    if profile is None:
        return None
    points = [(f"{e.label} ({e.diagnosis.limiter})", e.diagnosis.roofline) for e in profile.entries
              if e.diagnosis.roofline is not None]
    return roofline_png(points, f"roofline on {profile.target}")


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "/").split())
