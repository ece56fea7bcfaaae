"""The roofline plot: the target's memory and compute roofs, and each profiled kernel as a point."""

from __future__ import annotations

from xe_forge.plots import new_figure, to_png
from xe_forge.profile.models import RooflinePoint


def roofline_png(points: list[tuple[str, RooflinePoint]], title: str) -> bytes | None:
    """Log-log roofline with one labelled point per (label, point); None when no point can be placed."""
    placed = [(lbl, p) for lbl, p in points if p.intensity and p.achieved_tflops]
    if not placed:
        return None
    fig, ax = new_figure(figsize=(6.4, 4.2))
    ref = placed[0][1]
    xs = [p.intensity for _, p in placed] + [p.measured_intensity for _, p in placed if p.measured_intensity]
    lo, hi = min(min(xs) / 8, ref.ridge / 50), max(max(xs) * 8, ref.ridge * 50)
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(grid, [min(ref.peak_tflops, x * ref.peak_gbps * 1e-3) for x in grid], color="black", lw=1.2,
            label=f"roof: {ref.peak_gbps:.0f} GB/s, {ref.peak_tflops:.0f} TFLOP/s")
    ax.axvline(ref.ridge, color="grey", lw=0.6, ls=":")
    for i, (lbl, p) in enumerate(placed):
        color = f"C{i % 10}"
        ax.scatter([p.intensity], [p.achieved_tflops], color=color, zorder=3,
                   label=f"{lbl}: {p.achieved_tflops:.3g} TFLOP/s ({(p.fraction_of_roof or 0):.0%} of roof)")
        if p.measured_intensity:
            ax.scatter([p.measured_intensity], [p.achieved_tflops], facecolors="none", edgecolors=color, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte; hollow: measured DRAM bytes)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    return to_png(fig)
