"""Device-side helpers of engine_gpu.py, run as subprocesses so that one problem's crash, hang or GPU
fault is a record and not the end of the run.

    python benchmarks/engine_time.py compile PLAN.json INDEX     # warm torch.compile's caches
    python benchmarks/engine_time.py time PLAN.json OUT.json     # time every planned problem

`time` builds each problem at its variant's shapes (the verifier's own case builder and weight
pairing), then times, interleaved round by round with the L2 cache flushed before every call, the
engine's output, the PyTorch reference in eager mode, torch.compile(mode="max-autotune-no-cudagraphs")
of the reference, and cuBLAS's product for the first GEMM alone; medians of device-event times.
"""

from __future__ import annotations

import copy
import json
import math
import sys
import time
import traceback
from pathlib import Path
from typing import Any

COMPILE_MODE = "max-autotune-no-cudagraphs"


def build(item: dict[str, Any], kernel: str) -> tuple[Any, Any, list[Any]]:
    """(candidate model, eager reference in the run dtype, inputs) at the item's variant shapes."""
    import torch

    from xe_forge.problem.cases import build_case, import_from_path, model_class
    from xe_forge.problem.kernel import load_problem
    from xe_forge.verify.weights import load_into, pair_tensors

    problem = load_problem(kernel, reference=item["reference"], spec=item["spec"], variant=item["variant"])
    variant = problem.variant_entry()
    ref_mod = import_from_path(item["reference"], "reference")
    cand_mod = import_from_path(kernel, "candidate")
    case = build_case(ref_mod, problem.spec, variant, seed=1234, device="cuda")
    dtype = variant.dtype or "float32"
    torch.manual_seed(1234)
    ref = model_class(ref_mod)(*case.init_args).to("cuda")
    torch.manual_seed(1234)
    cand = model_class(cand_mod)(*case.init_args).to("cuda")
    state = ref.state_dict()
    load_into(cand, state, pair_tensors(state, cand.state_dict()))  # the reference's weights, as the verifier does
    cand = cand.to(getattr(torch, dtype))
    eager = copy.deepcopy(ref).to(dtype=getattr(torch, dtype))
    inputs = [x.to(getattr(torch, dtype)) if torch.is_tensor(x) and x.is_floating_point() else x for x in case.inputs]
    return cand, eager, inputs


def compile_warmup(plan: dict[str, Any], index: int) -> None:
    import torch

    item = plan["items"][index]
    _, eager, inputs = build(item, item["seed"])
    compiled = torch.compile(eager, mode=COMPILE_MODE)
    with torch.no_grad():
        compiled(*inputs)
    torch.cuda.synchronize()


def _first_linear(model: Any) -> Any:
    import torch

    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            return module.weight
    return next((p for p in model.parameters() if p.dim() == 2), None)


def _median_times(fns: dict[str, Any], budget_s: float, max_rounds: int = 60) -> dict[str, float]:
    """Interleaved rounds: every variant once per round, each after an L2 flush; medians in ms."""
    import torch

    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    times: dict[str, list[float]] = {name: [] for name in fns}
    start_all = time.monotonic()
    for _ in range(max_rounds):
        for name, fn in fns.items():
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end))
        if time.monotonic() - start_all > budget_s and len(times[next(iter(fns))]) >= 10:
            break
    return {name: sorted(v)[len(v) // 2] for name, v in times.items()}


def time_item(item: dict[str, Any], budget_s: float) -> dict[str, Any]:
    import torch

    record: dict[str, Any] = {"problem": item["name"], "dtype": item["dtype"], "kernel": item["kernel_used"]}
    cand, eager, inputs = build(item, item["kernel_used"])
    with torch.no_grad():
        got, want = cand(*inputs), eager(*inputs)
        record["rel_l2_vs_eager"] = float((got.float() - want.float()).norm() / (want.float().norm() + 1e-30))
        fns = {"output": lambda: cand(*inputs), "eager": lambda: eager(*inputs)}
        if item.get("compiled"):
            compiled = torch.compile(copy.deepcopy(eager), mode=COMPILE_MODE)
            compiled(*inputs)
            fns["compile"] = lambda: compiled(*inputs)
        weight = _first_linear(eager)
        x = next((t for t in inputs if torch.is_tensor(t) and t.dim() == 2), None)
        if weight is not None and x is not None and x.shape[1] == weight.shape[1]:
            fns["cublas_mm"] = lambda: torch.mm(x, weight.t())
        for fn in fns.values():  # warm-up: compilation, autotuning, caches
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        record |= {f"{k}_ms": v for k, v in _median_times(fns, budget_s).items()}
    for other in ("eager", "compile", "cublas_mm"):
        if f"{other}_ms" in record:
            record[f"output_vs_{other}"] = record[f"{other}_ms"] / record["output_ms"]
    return record


def time_plan(plan: dict[str, Any], out: Path) -> None:
    records = []
    deadline = plan["deadline"]
    for item in plan["items"]:
        left = deadline - time.time()
        if left < 8:
            records.append({"problem": item["name"], "dtype": item["dtype"], "error": "not timed: deadline reached"})
            continue
        try:
            records.append(time_item(item, budget_s=min(plan.get("budget_s", 2.0), left / 4)))
        except Exception as err:  # one problem's failure is a record
            records.append({"problem": item["name"], "dtype": item["dtype"],
                            "error": f"{type(err).__name__}: {err}"[:500], "trace": traceback.format_exc()[-1500:]})
        out.write_text(json.dumps(records, indent=1, default=str))
        last = records[-1]
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) and math.isfinite(v) else v)
                          for k, v in last.items() if k != "trace"}), flush=True)


if __name__ == "__main__":
    mode, plan_path = sys.argv[1], Path(sys.argv[2])
    plan_data = json.loads(plan_path.read_text())
    if mode == "compile":
        compile_warmup(plan_data, int(sys.argv[3]))
    else:
        time_plan(plan_data, Path(sys.argv[3]))
