"""`xe-forge kb distill RUN_ID`: a verified stage win becomes a draft knowledge-base pattern.

The draft carries its evidence (measured speedup and shapes, or 'speed unverified' from a CPU run),
the target and the toolchain; it is written to a file for a person to review, never straight into
the knowledge base, and it validates under `kb validate`.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import yaml

from xe_forge.errors import InputError
from xe_forge.store import RunStore


def changed_regions(before: str, after: str, context: int = 2) -> tuple[str, str]:
    """The lines that differ between two files, with a little context, side by side."""
    a, b = before.splitlines(), after.splitlines()
    old, new = [], []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        old.append("\n".join(a[i1:i2]))
        new.append("\n".join(b[j1:j2]))
    return "\n# ...\n".join(old) or before, "\n# ...\n".join(new) or after


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "x"


def distill_run(run_dir: Path) -> list[dict[str, Any]]:
    store_path = run_dir / "store.sqlite"
    if not store_path.is_file() or not (run_dir / "input.py").is_file():
        raise InputError(f"{run_dir} is not an xe-forge run directory (no store.sqlite / input.py)")
    report = json.loads((run_dir / "report.json").read_text()) if (run_dir / "report.json").is_file() else {}
    store = RunStore(store_path)
    try:
        rows = [r for r in store.query("SELECT * FROM candidates ORDER BY id") if r["accepted"]]
    finally:
        store.close()
    current = (run_dir / "input.py").read_text()
    target = report.get("target", "any")
    # The reviewer opens the run's record from the draft (kb validate checks that it exists).
    record = (run_dir / "report.json" if (run_dir / "report.json").is_file() else store_path).resolve().as_uri()
    entries = []
    for row in rows:
        before, after = changed_regions(current, row["code"])
        verdict = json.loads(row["verdict"] or "{}")
        timing = verdict.get("timing")
        shapes = ", ".join(r.get("variant", "") for r in verdict.get("correctness", []))
        evidence = (f"measured {timing['speedup']:.3f}x over the stage input (margin {timing['margin']:.1%}, "
                    f"{timing['reps']} interleaved reps) on {report.get('device')}" if timing
                    else "speed unverified (verified correct on the CPU, speed not measured): confirm with `xe-forge bench`")
        entries.append({
            "id": f"distilled-{_slug(row['run_id'])}-{row['stage'].replace('_', '-')}-{row['id']}",
            "kind": "pattern",
            "title": f"{row['stage']}: {row['recipe']} on {Path(report.get('kernel', 'kernel')).parent.name}",
            "stages": [row["stage"]],
            "targets": [target],
            **({"toolchain": _toolchain_range(report.get("toolchain"))} if report.get("toolchain") else {}),
            "source": f"xe-forge run {row['run_id']}, candidate {row['id']} ({row['source']}:{row['recipe']}): "
                      f"{record}",
            "confidence": "medium" if timing and timing.get("faster") else "low",
            "summary": f"DRAFT for review. {row['rationale'] or 'Accepted candidate.'} Evidence: {evidence}; "
                       f"verified on {shapes}.",
            "pattern": {"before": before, "after": after,
                        "rationale": (row["rationale"] or f"recipe {row['recipe']}") + f" ({evidence})"},
        })
        current = row["code"]
    return entries


def _toolchain_range(text: str) -> str | None:
    m = re.match(r"(triton-xpu|triton) (\d+\.\d+(?:\.\d+)?)", text or "")
    return f"{m.group(1)}>={m.group(2)}" if m else None


def write_distilled(run_dir: Path, output: Path | None) -> tuple[Path, int]:
    entries = distill_run(run_dir)
    if not entries:
        raise InputError(f"run {run_dir.name} has no accepted candidate to distill")
    path = output or run_dir / "distilled.yaml"
    path.write_text(yaml.safe_dump({"entries": entries}, sort_keys=False, width=110))
    return path, len(entries)
