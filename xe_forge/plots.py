"""Matplotlib figures as PNG bytes for the HTML reports (headless: the Agg backend)."""

from __future__ import annotations

import io
from typing import Any


def new_figure(ncols: int = 1, figsize: tuple[float, float] = (7, 3.2)) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=figsize)


def to_png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
