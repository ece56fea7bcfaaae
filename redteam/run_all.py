"""Run every manifest entry through `xe-forge check --device cpu` (one at a time) and write RESULTS.md's table.

The corpus lives in tests/verify/fixtures/redteam1/ (tests/verify/test_redteam1.py runs it in-process);
this runner goes through the CLI, as the red team did.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = ROOT / "tests" / "verify" / "fixtures" / "redteam1"
sys.path.insert(0, str(CORPUS))
from manifest import ENTRIES  # noqa: E402


def check(path: str, spec: str | None) -> tuple[int, str]:
    folder = (CORPUS / path).parent
    spec_path = CORPUS / spec if spec else folder / "spec.yaml"
    cmd = [sys.executable, "-m", "xe_forge", "check", str(CORPUS / path), "--reference", str(folder / "ref_pytorch.py"),
           "--spec", str(spec_path), "--device", "cpu", "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    try:
        v = json.loads(run.stdout)["verdict"]
    except (ValueError, KeyError):
        return run.returncode, "no verdict: " + " ".join((run.stderr or run.stdout)[-300:].split())
    if v.get("passed"):
        notes = [n for n in v.get("notes", []) if "leaves" in n or "frozen" in n or "keep" in n]
        return run.returncode, "PASSED" + (f" (note: {notes[0][:140]})" if notes else "")
    f = (v.get("findings") or [{}])[0]
    return run.returncode, f"[{v.get('stage_failed')}/{f.get('check')}] {f.get('message', '')}"


def main() -> None:
    only = set(sys.argv[1:])
    rows = []
    for path, spec, cls, what in ENTRIES:
        if only and path not in only:
            continue
        rc, msg = check(path, spec)
        honest = Path(path).name.startswith("honest_")
        if honest:
            verdict = "accepted" if rc == 0 else "WRONGLY REJECTED"
        else:
            verdict = "PASSED = hole" if rc == 0 else "CAUGHT"
        name = path + (f" ({Path(spec).stem})" if spec else "")
        rows.append((honest, name, cls, what, rc, msg.replace("|", "/").replace("\n", " ")[:260], verdict))
        print(f"{rc} {verdict:16} {name}: {msg[:160]}", flush=True)
    out = ["| attack | class | what it does | exit | verifier's message (first line) | verdict |", "|---|---|---|---|---|---|"]
    out += [f"| {n} | {c} | {w} | {rc} | {m} | **{v}** |" for h, n, c, w, rc, m, v in rows if not h]
    out += ["", "| honest kernel | style | exit | verifier's message | verdict |", "|---|---|---|---|---|"]
    out += [f"| {n} | {w} | {rc} | {m} | **{v}** |" for h, n, c, w, rc, m, v in rows if h]
    (HERE / "results_table.md").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
