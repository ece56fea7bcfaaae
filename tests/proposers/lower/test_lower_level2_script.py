"""benchmarks/lower_level2_gpu.py on the CPU: the plan, the rows, resuming across calls, the table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
sys.path.insert(0, str(ROOT))

from benchmarks.lower_level2_gpu import State, plan, table  # noqa: E402

LEVEL2 = Path(__file__).parent / "level2"


def run(out: Path, *extra: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lower_level2_gpu.py"), str(LEVEL2),
                           "--out", str(out), "--device", "cpu", "--workers", "1", "--dtypes", "float32", *extra],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow  # one port verified under the interpreter, in a worker process
def test_a_call_ports_and_a_later_call_takes_it_over(tmp_path: Path) -> None:
    first = run(tmp_path / "call1", "--only", "12")
    assert "1 to port" in first
    rows = [json.loads(line) for line in (tmp_path / "call1" / "results.jsonl").read_text().splitlines()]
    (row,) = rows
    assert row["verified"] and row["dtype"] == "float32" and set(row["paths"].values()) == {"general"}
    assert (tmp_path / "call1" / "ports.jsonl.gz").is_file()
    second = run(tmp_path / "call2", "--only", "12", "--resume-from", str(tmp_path / "call1"))
    assert "0 to port, 1 rows taken over" in second
    assert "| 12_Gemm_Multiply_LeakyReLU.py | float32 | no | yes | general |" in \
        (tmp_path / "call2" / "table.md").read_text()


def test_rows_that_did_not_finish_are_planned_again(tmp_path: Path) -> None:
    previous = tmp_path / "prev"
    previous.mkdir()
    lines = [{"problem": "1_A.py", "dtype": "float32", "verified": True},
             {"problem": "2_B.py", "dtype": "float32", "verified": False,
              "reason": "the worker died or passed the per-problem time limit"}]
    (previous / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (tmp_path / "now").mkdir()
    state = State(tmp_path / "now", previous)
    state.lowerings["2_B.py|float32"] = "{recorded}"
    files = [tmp_path / "1_A.py", tmp_path / "2_B.py", tmp_path / "3_C.py"]
    todo = plan(state, files, ["bfloat16", "float32"])
    assert [(Path(p).name, d, low) for p, d, low in todo] == [
        ("1_A.py", "bfloat16", None), ("2_B.py", "bfloat16", None), ("3_C.py", "bfloat16", None),
        ("2_B.py", "float32", "{recorded}"), ("3_C.py", "float32", None)]


def test_the_table_states_the_targets() -> None:
    def timed(name, speedup, vs_compile, faster=True):
        return {"problem": name, "dtype": "bfloat16", "lowered": True, "verified": True,
                "paths": {"bench": "fast0", "unseen 1": "general"},
                "eager": {"speedup": speedup, "faster": faster, "margin": 0.02},
                "compile": {"speedup": vs_compile, "faster": vs_compile > 1.02, "margin": 0.02}, "timed_path": "fast0"}

    rows = [timed("1_A.py", 2.0, 1.5), timed("2_B.py", 0.5, 0.4, faster=False),
            {"problem": "3_C.py", "dtype": "bfloat16", "verified": False, "reason": "failed at unseen: x"}]
    text = table(rows, 3, ["bfloat16"])
    assert "verified 2 of 3, 2 of them at unseen shapes" in text
    assert "served by a fast path 2, by the general path 2" in text
    assert "geomean 1.000x eager" in text and "0.775x torch.compile over 2" in text
    assert "slower than eager by more than the margin: 1" in text and "fast_1 vs eager 0.33" in text
    assert "| 3_C.py | bfloat16 | no | no | - | - | - | - | failed at unseen: x |" in text
