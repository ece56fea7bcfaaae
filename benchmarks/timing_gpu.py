"""Issue 25 on a GPU: the timer and the parent's clock against honest kernels and timing cheats.

    python benchmarks/timing_gpu.py OUT_DIR        # writes OUT_DIR/timing.json, prints a table

Honest pairs: a candidate and a baseline that compute the same function (y = 2x + 1 over 4M fp32
values) with a tunable amount of redundant device work (`repeat` dependent multiplies by a runtime
1.0 per element) split over 1 or 10 launches, calibrated to 10 us .. 50 ms per call, so true ratios
span 0.1x to 100x. Each pair is verified by the product's Evaluator (timing only: full=False), and
independently re-timed here with triton.testing.do_bench (median, L2 flushed), in this process.
Pass: verified, and the reported ratio within 5% of do_bench's.

Cheats (all must fail at `timing`): less work and a cached answer once the timing loop has begun, a
doctored device timer (the candidate's chunk replies scaled down on their way to the parent, which
is all a lying timer can do), and a candidate that rebinds the reference's forward so an eager
baseline in its process would sleep.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEADLINE = float(os.environ.get("TIMING_DEADLINE", "300"))
STARTED = time.monotonic()
DRY = "--dry-run" in sys.argv  # on the CPU, tiny sizes: the script's plumbing, not its figures
N = 2048 if DRY else 4 * 1024 * 1024
DEVICE = "cpu" if DRY else "cuda"
if DRY:
    os.environ["TRITON_INTERPRET"] = "1"

REFERENCE = f'''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


N = {N}


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
'''

KERNEL = '''import torch
import torch.nn as nn
import triton
import triton.language as tl

REPEAT = {repeat}
LAUNCHES = {launches}


@triton.jit
def work_kernel(x_ptr, y_ptr, n, one, repeat, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask, other=0.0)
    for _ in range(repeat):
        acc = acc * one
    tl.store(y_ptr + offs, acc * 2.0 + 1.0, mask=mask)


def work(x, y, repeat):
    n = x.numel()
    step = triton.cdiv(n, LAUNCHES)
    for i in range(LAUNCHES):
        lo = i * step
        hi = min(n, lo + step)
        if hi > lo:
            work_kernel[(triton.cdiv(hi - lo, 1024),)](x[lo:hi], y[lo:hi], hi - lo, 1.0, repeat, BLOCK=1024)
{extra}

class Model(nn.Module):
    def forward(self, x):
{forward}


N = {n}


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
'''

HONEST = "        y = torch.empty_like(x)\n        work(x, y, REPEAT)\n        return y"
CHEATS = {
    "less work while timed": ("_CALLS = [0]\n",
                              "        _CALLS[0] += 1\n        y = torch.empty_like(x)\n"
                              "        if _CALLS[0] > 8:\n            half = x.numel() // 2\n"
                              "            work(x[:half], y[:half], REPEAT)\n            return y\n"
                              "        work(x, y, REPEAT)\n        return y"),
    "cached answer while timed": ("_CALLS = [0]\n_LAST = []\n",
                                  "        _CALLS[0] += 1\n        if _CALLS[0] > 8 and _LAST:\n"
                                  "            return _LAST[-1]\n        y = torch.empty_like(x)\n"
                                  "        work(x, y, REPEAT)\n        _LAST.append(y)\n        return y"),
    "sleeping baseline (rebinds the reference's forward)": (
        "import sys as _sys\n\n\ndef _sabotage():\n    for _m in list(_sys.modules.values()):\n"
        "        if getattr(_m, '__name__', '').startswith('xe_forge_user_reference') and hasattr(_m, 'Model'):\n"
        "            _f = _m.Model.forward\n"
        "            _m.Model.forward = lambda self, x, _f=_f: (torch.cuda._sleep(10**7) if x.is_cuda else None, _f(self, x))[1]\n",
        "        _sabotage()\n" + HONEST),
}
PAIRS = [  # (candidate ms, launches), (baseline ms, launches): true ratios 0.1x .. 100x
    ((0.01, 1), (1.0, 1)), ((0.01, 1), (0.1, 10)), ((0.1, 10), (0.01, 1)), ((0.05, 1), (0.1, 1)),
    ((1.0, 1), (1.0, 10)), ((1.0, 10), (10.0, 1)), ((10.0, 1), (1.0, 1)), ((0.5, 1), (50.0, 1)),
    ((50.0, 1), (50.0, 10)), ((50.0, 10), (5.0, 1)),
]


def module(repeat: int, launches: int, forward: str = HONEST, extra: str = "") -> str:
    return KERNEL.format(repeat=repeat, launches=launches, forward=forward, extra=extra, n=N)


def do_bench_ms(path: Path) -> float:
    import torch
    import triton

    from xe_forge.problem.cases import import_from_path

    mod = import_from_path(path, "bench")
    model = mod.Model().to(DEVICE)
    x = torch.randn(N, device=DEVICE)
    with torch.no_grad():
        if DRY:
            started = time.perf_counter()
            model(x)
            return (time.perf_counter() - started) * 1e3 + 1e-6
        return float(triton.testing.do_bench(lambda: model(x), warmup=50, rep=300, return_mode="median"))


def calibrate(tmp: Path) -> tuple[float, float]:
    """do_bench at two repeat counts: device ms = a + b * repeat for one launch."""
    lo, hi = 1, (8 if DRY else 4096)
    t = []
    for r in (lo, hi):
        path = tmp / f"cal_{r}.py"
        path.write_text(module(r, 1))
        t.append(do_bench_ms(path))
    b = (t[1] - t[0]) / (hi - lo)
    return t[0] - b * lo, b


def repeat_for(ms: float, a: float, b: float) -> int:
    if DRY:
        return max(1, min(4, int(ms)))
    return max(1, int(round((ms - a) / b))) if ms > a else 1


def verdict_row(v: Any) -> dict[str, Any]:
    t = v.timing
    clock = t.clock if t else None
    return {"passed": v.passed, "stage": v.stage_failed, "findings": [f.render()[:300] for f in v.findings[:3]],
            "seconds": round(v.seconds, 2), "phase_seconds": v.phase_seconds,
            "speedup": t.speedup if t else None, "cand_ms": t.candidate_ms if t else None,
            "base_ms": t.baseline_ms if t else None, "margin": t.margin if t else None,
            "reps": t.reps if t else None,
            "clock": clock.model_dump() if clock else None}


def main(out: Path) -> int:
    import torch

    from xe_forge.problem.kernel import load_problem
    from xe_forge.verify import protocol as p
    from xe_forge.verify.evaluate import Evaluator

    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="timing-gpu-"))
    (tmp / "ref.py").write_text(REFERENCE)
    a, b = calibrate(tmp)
    results: dict[str, Any] = {"device": "cpu (dry run)" if DRY else torch.cuda.get_device_name(), "calibration": {"a_ms": a, "b_ms": b},
                               "honest": [], "cheats": []}
    print(f"calibration: {a:.4f} ms + {b * 1e3:.4f} us per repeat", flush=True)
    with Evaluator(DEVICE, timeout=240, trials=1, cpu_timing=DRY) as ev:
        picked = {int(k) for k in os.environ.get("TIMING_PAIRS", "").split(",") if k}  # e.g. 1,2: a short call
        for i, ((c_ms, c_l), (b_ms, b_l)) in enumerate(PAIRS[:2] if DRY else PAIRS):
            if picked and i not in picked:
                continue
            if time.monotonic() - STARTED > DEADLINE:
                results["honest"].append({"skipped": "deadline"})
                continue
            cand, base = tmp / f"c{i}.py", tmp / f"b{i}.py"
            cand.write_text(module(repeat_for(c_ms, a, b), c_l))
            base.write_text(module(repeat_for(b_ms, a, b), b_l))
            problem = load_problem(cand, tmp / "ref.py")
            v = ev.evaluate(cand.read_text(), problem, baseline_source=base.read_text(), time_it=True, full=False)
            tc, tb = do_bench_ms(cand), do_bench_ms(base)
            row = {"target": [[c_ms, c_l], [b_ms, b_l]], "do_bench_cand_ms": tc, "do_bench_base_ms": tb,
                   "true_ratio": tb / tc, **verdict_row(v)}
            row["within_5pct"] = bool(v.timing) and abs(v.timing.speedup / row["true_ratio"] - 1) <= 0.05
            results["honest"].append(row)
            print(f"honest {i}: {c_ms}ms x{c_l} vs {b_ms}ms x{b_l}: passed={v.passed} "
                  f"tool={row['speedup']} true={row['true_ratio']:.3f} clock={(row['clock'] or {}).get('verdict')}",
                  flush=True)
        honest_src = module(repeat_for(1.0, a, b), 1)
        (tmp / "h.py").write_text(honest_src)
        problem = load_problem(tmp / "h.py", tmp / "ref.py")
        static = ev.static_findings
        ev.static_findings = lambda source, allow_torch: []  # the runtime defences on their own
        try:
            for name, (extra, forward) in CHEATS.items():
                src = module(repeat_for(1.0, a, b), 1, forward=forward, extra=extra)
                v = ev.evaluate(src, problem, baseline_source=None if "baseline" in name else honest_src,
                                time_it=True, full=False)
                results["cheats"].append({"cheat": name, **verdict_row(v)})
                print(f"cheat {name}: passed={v.passed} stage={v.stage_failed} "
                      f"{[f.check for f in v.findings]}", flush=True)
        finally:
            ev.static_findings = static
        for lie, ms in ((5.0, 1.0), (3.0, 0.05), (1.5, 10.0)):
            src = module(repeat_for(ms, a, b), 1)
            real_call = ev.runner.call

            def doctored(request, reply, timeout=None, _real=real_call, _lie=lie):
                answer = _real(request, reply, timeout)
                if isinstance(answer, p.Chunk):
                    answer.ms = [m / _lie for m in answer.ms]
                return answer

            ev.runner.call = doctored
            try:
                v = ev.evaluate(src, problem, baseline_source=src, time_it=True, full=False)
            finally:
                ev.runner.call = real_call
            results["cheats"].append({"cheat": f"doctored timer {lie}x at {ms} ms", **verdict_row(v)})
            print(f"cheat doctored {lie}x at {ms}ms: passed={v.passed} {[f.check for f in v.findings]}", flush=True)
    (out / "timing.json").write_text(json.dumps(results, indent=1))
    honest = [r for r in results["honest"] if "passed" in r]
    cheats = results["cheats"]
    print(f"honest accepted {sum(r['passed'] for r in honest)}/{len(honest)}, within 5% "
          f"{sum(r['within_5pct'] for r in honest)}/{len(honest)}; cheats rejected "
          f"{sum(not r['passed'] for r in cheats)}/{len(cheats)}; check seconds (honest, median) "
          f"{statistics.median([r['seconds'] for r in honest]) if honest else 0:.1f}")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(main(Path(args[0] if args else "timing-out")))
