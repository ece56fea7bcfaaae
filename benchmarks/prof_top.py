"""Where a check's seconds go: the top functions of each worker's cProfile dump (XE_FORGE_WORKER_PROFILE).

    python benchmarks/prof_top.py DIR [N]

Prints, per .prof file in DIR, its total and the N functions with the largest cumulative time whose
own code is xe_forge's or torch's (the rest is the interpreter and the standard library).
"""

from __future__ import annotations

import pstats
import sys
from pathlib import Path


def top(path: Path, n: int) -> list[str]:
    stats = pstats.Stats(str(path))
    rows = []
    for (file, line, name), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if ("xe_forge" in file or "/torch/" in file or "triton" in file) and ct >= 0.2:
            short = file.split("site-packages/")[-1].split("xe_forge/")[-1]
            rows.append((ct, f"{ct:7.2f}s  {short}:{line} {name}"))
    rows.sort(reverse=True)
    return [f"{path.name}: {stats.total_tt:.1f}s in profile"] + [r for _, r in rows[:n]]  # type: ignore[attr-defined]


if __name__ == "__main__":
    folder, count = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 14
    for prof in sorted(folder.glob("*.prof")):
        print("\n".join(top(prof, count)))
