"""Independent re-check and re-timing of optimize outputs, in a fresh process, without xe-forge's timer.

    python benchmarks/retime_gpu.py OUT.json CASE.json [CASE.json ...]

A CASE.json names {"name", "reference", "spec", "variant", "input", "output", "tool": {label: ratio}}
(the ratios the tool printed, for the comparison). For each case this script builds the reference
Model from the spec's bench variant (its own small reader of the spec: dims, inits, dtype), draws
inputs with torch.randn, loads one state dict into every module, checks the output kernel against the
fp32 reference (max error relative to the reference's scale), then times eager PyTorch, default
torch.compile, TorchInductor's Triton-only max-autotune lowering (when --lowering), the input kernel
and the output kernel with triton.testing.do_bench (L2 flushed, median), three rounds in turn, the
median of rounds. Nothing here imports xe_forge.verify.
"""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROUNDS = 3


def load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def evaluate_dim(expr: Any, dims: dict[str, int]) -> Any:
    if isinstance(expr, str):
        return eval(expr, {}, dict(dims))  # noqa: S307 - a spec of this repository
    if isinstance(expr, list):
        return tuple(evaluate_dim(e, dims) for e in expr)
    return expr


def case_inputs(spec: dict, variant: str) -> tuple[list[Any], list[tuple[int, ...]], str]:
    entry = spec[variant][0]
    dims = dict(entry["dims"])
    inits = [evaluate_dim(next(iter(d.values())), dims) for d in spec.get("inits", [])]
    shapes = [tuple(evaluate_dim(s, dims) for s in v["shape"]) for v in spec["inputs"].values()]
    return inits, shapes, entry.get("dtype", "float32")


def model_class(module: Any) -> Any:
    return getattr(module, "ModelNew", None) or module.Model


def bench(fn: Any) -> float:
    import triton

    return float(triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median"))


def lowering(model: Any) -> Any:
    """TorchInductor's Triton-only lowering: max-autotune with Triton GEMM and convolution templates."""
    import torch
    import torch._inductor.config as icfg

    # mode="max-autotune-no-cudagraphs" spelled as options: torch.compile takes a mode or options, not both
    wanted = {"max_autotune": True, "triton.cudagraphs": False, "max_autotune_gemm_backends": "TRITON",
              "max_autotune_conv_backends": "TRITON"}
    known = {k: v for k, v in wanted.items() if hasattr(icfg, k.split(".")[0])}
    return torch.compile(model, options=known)


def run_case(case: dict, with_lowering: bool) -> dict[str, Any]:
    import torch

    spec = yaml.safe_load(Path(case["spec"]).read_text())
    inits, shapes, dtype_name = case_inputs(spec, case.get("variant", "bench-gpu"))
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    ref_mod = load(case["reference"], f"ref_{case['name']}")
    reference = model_class(ref_mod)(*inits).cuda()
    state = reference.state_dict()
    inputs = [torch.randn(s, device="cuda").to(dtype) for s in shapes]
    models: dict[str, Any] = {"eager": reference.to(dtype)}
    for label in ("input", "output"):
        mod = load(case[label], f"{label}_{case['name']}")
        m = model_class(mod)(*inits).cuda()
        m.load_state_dict(state)
        models[label] = m.to(dtype)
    fp32 = model_class(ref_mod)(*inits).cuda()
    fp32.load_state_dict(state)
    with torch.no_grad():
        want = fp32.float()(*[x.float() for x in inputs])
        got = models["output"](*inputs)
    want, got = (want[0], got[0]) if isinstance(want, tuple) else (want, got)
    scale = float(want.abs().max()) or 1.0
    err = float((got.float() - want).abs().max()) / scale
    finite = bool(torch.isfinite(got).all())
    timed = dict(models)
    started = time.monotonic()
    timed["torch.compile"] = torch.compile(models["eager"])
    if with_lowering:
        timed["lowering"] = lowering(models["eager"])
    with torch.no_grad():
        for m in timed.values():  # compile and autotune outside the timed rounds
            m(*inputs)
        torch.cuda.synchronize()
        compile_s = time.monotonic() - started
        rounds: dict[str, list[float]] = {k: [] for k in timed}
        for _ in range(ROUNDS):
            for label, m in timed.items():
                rounds[label].append(bench(lambda m=m: m(*inputs)))
    ms = {k: statistics.median(v) for k, v in rounds.items()}
    out = {"name": case["name"], "dtype": dtype_name, "max_rel_err": err, "finite": finite, "ms": ms,
           "rounds": rounds, "compile_s": round(compile_s, 1), "tool": case.get("tool", {})}
    out["ratios"] = {f"output vs {k}": ms[k] / ms["output"] for k in ms if k != "output"}
    best = min(ms[k] for k in ("eager", "torch.compile", "lowering") if k in ms)
    out["ratios"]["output vs best of eager/compile/lowering"] = best / ms["output"]
    out["ratios"]["output vs better of input and port"] = min(ms["input"], ms.get("lowering", float("inf"))) / ms["output"]
    out["tool_within_5pct"] = {k: abs(v / out["ratios"][k] - 1) <= 0.05 for k, v in case.get("tool", {}).items()
                               if k in out["ratios"]}
    return out


def main(argv: list[str]) -> int:
    with_lowering = "--lowering" in argv
    args = [a for a in argv if not a.startswith("--")]
    out_path, cases = Path(args[0]), [json.loads(Path(c).read_text()) for c in args[1:]]
    results = []
    for case in cases:
        try:
            results.append(run_case(case, with_lowering))
        except Exception as exc:  # one case's failure is a record, not the end
            results.append({"name": case.get("name"), "error": f"{type(exc).__name__}: {exc}"[:500]})
        out_path.write_text(json.dumps(results, indent=1))
        r = results[-1]
        if "error" in r:
            print(f"{r['name']}: ERROR {r['error']}", flush=True)
            continue
        ratios = " ".join(f"{re.sub('output vs ', '', k)}={v:.3f}" for k, v in r["ratios"].items())
        print(f"{r['name']}: err={r['max_rel_err']:.2e} {ratios} tool={r['tool']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
