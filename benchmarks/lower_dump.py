"""Lower KernelBench problems with TorchInductor (Triton-only GEMM/conv templates) and dump the code.

Runs on a GPU (Inductor emits Triton only for a GPU device). For every problem file in a
KernelBench-format directory and every dtype asked for, it compiles the reference with
`max_autotune` and Triton-only backends, runs it once, and records: the generated wrapper module
(kernel sources inline), the launch config each autotuned kernel settled on, the library calls
Inductor kept (`extern_kernels.*`, aten fallbacks), the compile time, and the max error against
eager. These dumps are what `xe_forge.proposers.lower` packages into standalone kernel modules; on
the CPU they are test fixtures.

    python benchmarks/lower_dump.py PROBLEMS_DIR OUT.jsonl --dtype bfloat16 --workers 8 [--only 1-20]

Shapes are compiled dynamic (parameters too), so the packaged kernels take sizes as arguments and
can be checked at unseen shapes. Workers share the GPU: autotuning choices can be noisier than on
an idle device; the timings that matter are taken later, interleaved, by the benchmark itself.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import sys
import time
import traceback
from pathlib import Path

EXTERN = re.compile(r"\b(extern_kernels\.\w+|aten\.\w+(?:\.\w+)?|torch\.ops\.aten\.\w+(?:\.\w+)?)\(")


def _configs(modules_before: set[int]) -> dict[str, dict]:
    """Launch configs the autotuned kernels settled on, by kernel name."""
    from torch._inductor.codecache import PyCodeCache

    out: dict[str, dict] = {}
    for mod in list(PyCodeCache.modules):
        if id(mod) in modules_before:
            continue
        for name, obj in vars(mod).items():
            launchers = getattr(obj, "launchers", None)
            if not launchers:
                continue
            cfg = launchers[0].config
            out[name] = {"kwargs": {k: v for k, v in cfg.kwargs.items()}, "num_warps": cfg.num_warps,
                         "num_stages": cfg.num_stages, "n_launchers": len(launchers),
                         "grid_type": (getattr(obj, "inductor_meta", {}) or {}).get("grid_type")}
    return out


def lower_one(path: Path, dtype_name: str) -> dict:
    import torch
    import torch._dynamo
    import torch._inductor.config as icfg
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.utils import run_and_get_code

    rec: dict = {"problem": path.name, "dtype": dtype_name, "ok": False}
    torch._dynamo.reset()
    torch._dynamo.config.force_parameter_static_shapes = False
    torch._dynamo.config.force_nn_module_property_static_shapes = False
    icfg.max_autotune = True
    icfg.max_autotune_gemm_backends = "TRITON"
    icfg.max_autotune_conv_backends = "TRITON"
    icfg.fx_graph_cache = False
    icfg.autotune_fallback_to_aten = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dtype = getattr(torch, dtype_name)
    ns: dict = {"__name__": f"problem_{path.stem}"}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    torch.manual_seed(0)
    model = ns["Model"](*ns["get_init_inputs"]()).cuda().to(dtype)
    torch.manual_seed(1)
    inputs = [x.cuda().to(dtype) if torch.is_tensor(x) and x.is_floating_point() else
              (x.cuda() if torch.is_tensor(x) else x) for x in ns["get_inputs"]()]
    with torch.no_grad():
        expected = model(*inputs)
        before = {id(m) for m in PyCodeCache.modules}
        compiled = torch.compile(model, dynamic=True)
        t0 = time.perf_counter()
        got, codes = run_and_get_code(compiled, *inputs)
        rec["compile_s"] = round(time.perf_counter() - t0, 2)
    torch.cuda.synchronize()
    exp = expected if isinstance(expected, (tuple, list)) else [expected]
    out = got if isinstance(got, (tuple, list)) else [got]
    rec["max_abs_err"] = max(float((a.float() - b.float()).abs().max()) for a, b in zip(exp, out))
    rec["ref_absmax"] = max(float(a.float().abs().max()) for a in exp)
    rec["codes"] = codes
    rec["configs"] = _configs(before)
    rec["extern"] = sorted({m for c in codes for m in EXTERN.findall(c)})
    rec["module_constants"] = {k: v for k, v in ns.items() if isinstance(v, (int, float)) and not k.startswith("_")}
    rec["ok"] = True
    return rec


def worker(queue, results, dtype_name: str, cache_root: str) -> None:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = f"{cache_root}/{os.getpid()}"
    while True:
        item = queue.get()
        if item is None:
            return
        try:
            rec = lower_one(Path(item), dtype_name)
        except BaseException as exc:  # one problem's failure is a record, not the end of the dump
            rec = {"problem": Path(item).name, "dtype": dtype_name, "ok": False,
                   "error": f"{type(exc).__name__}: {str(exc)[:2000]}", "traceback": traceback.format_exc()[-3000:]}
        results.put(rec)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--only", default=None, help="ids, e.g. 1-20,37")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; stop handing out problems after it")
    args = ap.parse_args()
    files = sorted(args.problems.glob("*_*.py"), key=lambda p: int(p.name.split("_")[0]))
    if args.only:
        keep: set[int] = set()
        for part in args.only.split(","):
            a, _, b = part.partition("-")
            keep |= set(range(int(a), int(b or a) + 1))
        files = [f for f in files if int(f.name.split("_")[0]) in keep]
    ctx = mp.get_context("spawn")
    queue, results = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(queue, results, args.dtype, "/tmp/inductor-cache"))
             for _ in range(args.workers)]
    for p in procs:
        p.start()
    for f in files:
        queue.put(str(f))
    for _ in procs:
        queue.put(None)
    start = time.monotonic()
    done = 0
    with args.out.open("a") as fh:
        while done < len(files) and time.monotonic() - start < args.deadline:
            try:
                rec = results.get(timeout=5)
            except Exception:
                if not any(p.is_alive() for p in procs):
                    break
                continue
            done += 1
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            print(f"[{time.monotonic() - start:6.1f}s] {rec['problem']} {rec['dtype']} "
                  f"{'ok' if rec['ok'] else 'FAIL ' + rec.get('error', '')[:120]} "
                  f"{rec.get('compile_s', '')}s extern={rec.get('extern', '')}", flush=True)
    for p in procs:
        p.terminate()
    print(f"{done}/{len(files)} lowered in {time.monotonic() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
