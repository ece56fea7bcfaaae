"""report.html and the batch report.html as pages: what they say (parsed), and what a real browser draws.

The browser test runs Debian's Chromium headless (installed by .ci/run where apt is available; skipped
cleanly elsewhere): the screenshot must not be blank and must show the plots and the verdict badge in
their colours, and the DOM Chromium built must hold the page's key elements.
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from xe_forge.batch.report import summarize, write_batch_report
from xe_forge.pipeline.cover import CandidateRecord, StageReport
from xe_forge.pipeline.ratios import ratios_of
from xe_forge.pipeline.report import (
    FinalSummary,
    LlmUsage,
    RunReport,
    ShapeResult,
    Usage,
    render_html,
    render_markdown,
    waterfall_png,
)
from xe_forge.pipeline.status import Skipped
from xe_forge.verify.models import Timing

INPUT = "import triton\n\n@triton.jit\ndef k(x_ptr):\n    a = tl.load(x_ptr).to(tl.float32)\n    return a\n"
OUTPUT = "import triton\n\n@triton.jit\ndef k(x_ptr):\n    a = tl.load(x_ptr)\n    return a  # <b>kept</b>\n"


def _timing(speedup: float) -> Timing:
    return Timing(candidate_ms=1.0, baseline_ms=speedup, speedup=speedup, spread=0.01, margin=0.02,
                  faster=speedup > 1.02, reps=50)


def gpu_report() -> RunReport:
    candidates = [CandidateRecord(iteration=1, source="rules", recipe="drop-dot-upcast", passed=True, accepted=True,
                                  speedup=1.5, summary="passed (kernel vs input kernel: 1.500x)", rationale="bf16 operands for the DPAS"),
                  CandidateRecord(iteration=2, source="llm", recipe="fusion", passed=False, accepted=False,
                                  summary="failed at correctness: ci trial 0 out: max_abs_err 3.1 <script>x</script>")]
    return RunReport(
        run_id="20261201-demo", status="improved", headline="improved, unseen shapes not checked",
        not_checked=[Skipped(check="unseen", what="unseen shapes not checked", reason="the spec has no `unseen:`")],
        kernel="/k/kernel.py", reference="/k/kernel_pytorch.py", device="cuda", target="nvidia-sm90",
        toolchain="triton 3.6.0", engine="rules", variant="bench-gpu", plan=["dtype", "autotuning"],
        stages=[StageReport(stage="dtype", improved=True, speedup=1.5, speed_verified=True, candidates=candidates),
                StageReport(stage="autotuning", improved=True, speedup=1.2, speed_verified=True)],
        final=FinalSummary(passed=True, changed=True, shapes=[
            ShapeResult(name="bench-gpu", unseen=False, passed=True, dtype="bfloat16", rtol=0.01, atol=0.01, calls=4,
                        calls_passed=4, max_abs_err=0.004, launches=1, ghost_changed=True)]),
        speedup=1.8, speed="output vs input kernel: 1.800x",
        ratios=ratios_of({"input kernel": _timing(1.8)}, "output", "final check")
        + ratios_of({"eager": _timing(1.3), "torch.compile": _timing(0.9)}, "output", "run against PyTorch"),
        timings={"input kernel": _timing(1.8), "eager": _timing(1.3), "torch.compile": _timing(0.9)})


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.classes: set[str] = set()
        self.links: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.ids |= {a["id"]} if a.get("id") else set()
        self.classes |= set((a.get("class") or "").split())
        self.links += [a["href"]] if tag == "a" and a.get("href") else []
        self.scripts += tag == "script"


def parsed(html: str) -> _Ids:
    p = _Ids()
    p.feed(html)
    return p


def test_run_page_has_verdict_plots_tables_and_the_diff():
    r = gpu_report()
    html = render_html(r, waterfall_png(r.stages), None, input_code=INPUT, output_code=OUTPUT)
    page = parsed(html)
    assert html.startswith("<!doctype html>")
    assert {"verdict", "not-checked", "speed", "waterfall", "stages", "candidates", "shapes", "diff"} <= page.ids
    assert {"diff_sub", "diff_add"} & page.classes  # the removed upcast and the changed line are marked
    assert page.scripts == 0  # a model's answer quoted in a reason is text, never markup
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "&lt;b&gt;kept&lt;/b&gt;" in html
    assert "improved, unseen shapes not checked" in html and "the spec has no `unseen:`" in html
    for text in ("output vs eager PyTorch", "output vs torch.compile (default)", "output vs input kernel", "1.300x",
                 "0.900x", "bf16 operands for the DPAS"):
        assert text in html


def test_cpu_page_says_speed_was_not_measured_and_shows_no_number():
    r = gpu_report().model_copy(update={"timings": {}, "ratios": [], "speedup": None,
                                        "speed": "not measured: the CPU runs it",
                                        "stages": [StageReport(stage="dtype", improved=True)]})
    html = render_html(r, waterfall_png(r.stages), None, input_code=INPUT, output_code=OUTPUT)
    assert "waterfall" not in parsed(html).ids and "no stage has a measured speedup" in html
    assert "Speed: not measured: the CPU runs it" in html and "1.000x" not in html
    md = render_markdown(r)
    assert "| dtype | changed, verified correct | not measured |" in md and "## Not checked" in md
    assert "1.300x" not in md and "1.300x" not in html
    assert "changed, verified correct" in html  # 'improved' only where measured


def test_run_page_shows_llm_cost_per_stage_stages_not_run_and_a_fallback():
    usage = Usage(calls=3, cached=1, prompt_tokens=1200, completion_tokens=300, cost_usd=0.0123)
    llm = LlmUsage(**usage.model_dump(), by_stage={"run": Usage(calls=1, prompt_tokens=200, completion_tokens=50,
                                                                cost_usd=0.002), "dtype": usage},
                   budget="$0.05", stopped="the LLM budget of $0.05 is spent")
    r = gpu_report().model_copy(update={
        "llm": llm, "not_run": ["memory_access", "autotuning"],
        "final": FinalSummary(passed=True, changed=True, fell_back=True, fell_back_to="dtype",
                              failure="failed at correctness: unseen[0] max_abs_err 2.0")})
    html = render_html(r, None, None, input_code=INPUT, output_code=OUTPUT)
    page = parsed(html)
    assert {"llm", "stopped", "fell-back"} <= page.ids
    assert "$0.0123" in html and "budget $0.05" in html and "$0.0020" in html  # the run, the budget, analysis
    assert "not run (stopped early)" in html and "memory_access" in html
    assert "the kernel of stage dtype" in html and "unseen[0] max_abs_err 2.0" in html
    unknown = r.model_copy(update={"llm": LlmUsage(calls=1, cost_usd=None)})
    assert "cost unknown" in render_html(unknown, None, None)  # never $0 for a price not in the map


def test_failure_page_without_an_output(tmp_path):
    r = RunReport(run_id="x", status="failed", headline="failed: no device", error="EnvError: no cuda device",
                  kernel="/k.py")
    html = render_html(r, None, None, input_code=INPUT)
    assert "diff" in parsed(html).ids and "No output kernel" in html and "EnvError: no cuda device" in html


def batch_summary(tmp_path: Path) -> dict:
    results = [{"id": i, "name": f"{i}_P{i}", "status": "improved", "correct": True, "worker": 0, "attempts": 1,
                "run_id": f"p{i:03d}-P{i}", "timings": {"eager": {"speedup": s}}}
               for i, s in ((1, 2.5), (2, 0.9), (3, 1.4))]
    results.append({"id": 4, "name": "4_P4", "status": "failed", "reason": "input fails", "worker": 0})
    results.append({"id": 5, "name": "5_P5", "status": "verified correct, speed not measured", "correct": True,
                    "worker": 0, "ported": True, "ported_by": "lower",
                    "not_checked": ["speed not measured", "unseen shapes not checked"]})
    (tmp_path / "runs" / "p001-P1").mkdir(parents=True)
    (tmp_path / "runs" / "p001-P1" / "report.html").write_text("<!doctype html>")
    s = summarize(results, wall_seconds=60, workers=1)
    write_batch_report(tmp_path, s, results)
    return s


def test_batch_page_links_each_run_report_and_says_what_was_not_measured(tmp_path):
    s = batch_summary(tmp_path)
    html = (tmp_path / "report.html").read_text()
    page = parsed(html)
    assert page.links == ["runs/p001-P1/report.html"]  # only reports that exist are linked
    assert {"verdict", "figures", "plots", "problems"} <= page.ids
    assert "not timed (torch.compile failed on every problem)" in html and "None" not in html  # a geomean never prints as None
    assert s["geomean_speedup_vs_eager"] is not None and "fast_p" in html
    md = (tmp_path / "summary.md").read_text()
    assert "TorchInductor lowering" in html and "| 5_P5 | TorchInductor lowering |" in md
    (row,) = [line for line in md.splitlines() if "5_P5" in line]
    cells = [c.strip() for c in row.split("|")]
    assert "speed not measured, unseen shapes not checked" in cells  # the not-checked column is never empty


# ---------------------------------------------------------------- a real browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# flags for a sandboxed machine with no network (the probe's, in the environment notes)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def _chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120)


def _screenshot(tmp_path: Path, page: Path, height: int):
    import matplotlib.image as mpimg
    import numpy as np

    shot = tmp_path / f"{page.stem}.png"
    _chromium(tmp_path, page, f"--screenshot={shot}", f"--window-size=1280,{height}")
    assert shot.is_file(), "chromium wrote no screenshot"
    return np.asarray(mpimg.imread(shot))[..., :3]


def _share(img, rgb: tuple[int, int, int], tol: float = 0.06) -> float:
    """Fraction of pixels within `tol` of a colour."""
    import numpy as np

    return float((np.abs(img - np.array(rgb) / 255).max(axis=-1) < tol).mean())


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs Debian's package)")
def test_pages_render_in_headless_chromium(tmp_path: Path):
    r = gpu_report()
    run_page = tmp_path / "report.html"
    run_page.write_text(render_html(r, waterfall_png(r.stages), None, input_code=INPUT, output_code=OUTPUT))
    img = _screenshot(tmp_path, run_page, 1600)
    assert img.std() > 0.1 and _share(img, (255, 255, 255)) < 0.95  # not a blank page
    assert _share(img, (0x24, 0x29, 0x2F)) > 0.01  # the header bar
    assert _share(img, (0x1A, 0x7F, 0x37), 0.04) > 0.0002  # the green "improved" badge
    assert _share(img, (0x2C, 0xA0, 0x2C), 0.08) > 0.001  # the waterfall's green bars: the inline PNG decoded
    dom = _chromium(tmp_path, run_page, "--dump-dom").stdout
    page = parsed(dom)
    assert {"verdict", "waterfall", "candidates", "shapes", "diff"} <= page.ids and "diff_add" in page.classes

    out = tmp_path / "batch"
    out.mkdir()
    batch_summary(out)
    img = _screenshot(tmp_path, out / "report.html", 1200)
    assert img.std() > 0.1 and _share(img, (0x1F, 0x77, 0xB4), 0.08) > 0.0005  # the fast_p curve (matplotlib blue)
    dom = _chromium(tmp_path, out / "report.html", "--dump-dom").stdout
    assert parsed(dom).links == ["runs/p001-P1/report.html"] and "4_P4" in dom
