"""Lowering a model through TorchInductor to Triton alone, on a GPU, recorded as a `Lowering`.

Settings: max_autotune with Triton-only GEMM and convolution backends (no cuBLAS/cuDNN templates),
dynamic shapes (parameters and module attributes too) without duck sizing, one graph (fullgraph),
transposed convolutions decomposed into regular ones first (transposed.py), graph partitions and
CUDA graphs off (a packaged forward is one plain function), fp32 dots in IEEE unless the precision
contract allows TF32. The record keeps Inductor's wrapper code, the launch config each autotuned
kernel settled on, which model value each graph input is, and the shape assumptions (guards).

XPU Inductor emits Triton the same way: nothing here names a vendor; the device is the model's.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from typing import Any

from xe_forge.proposers.lower.models import LaunchConfig, Lowering
from xe_forge.proposers.lower.trace import dynamo_settings, recording_backend
from xe_forge.proposers.lower.transposed import REWRITE_NOTE, convolution_decomposition

EXTERN = re.compile(r"\b(extern_kernels\.\w+|aten\.\w+(?:\.\w+)?|torch\.ops\.aten\.\w+(?:\.\w+)?)\(")
KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.triton\(", re.M)
INDUCTOR_SETTINGS = {
    "max_autotune": True,
    "max_autotune_gemm_backends": "TRITON",
    "max_autotune_conv_backends": "TRITON",
    "fx_graph_cache": False,
    "graph_partition": False,
    "triton.cudagraphs": False,
    "autotune_fallback_to_aten": True,
}


@contextlib.contextmanager
def inductor_settings(*, allow_tf32: bool, backends: str = "TRITON") -> Iterator[None]:
    import torch
    import torch._inductor.config as icfg

    wanted = {**INDUCTOR_SETTINGS, "max_autotune_gemm_backends": backends, "max_autotune_conv_backends": backends}
    known = {k: v for k, v in wanted.items() if _has_setting(icfg, k)}
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    torch.backends.cudnn.allow_tf32 = allow_tf32
    try:
        with icfg.patch(known):
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _has_setting(cfg: Any, dotted: str) -> bool:
    obj = cfg
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def lower_model(model: Any, inputs: list[Any], *, problem: str, dtype: str, allow_tf32: bool = False,
                backends: str = "TRITON", budget_s: float | None = None) -> Lowering:
    """Compile `model(*inputs)` with Inductor (Triton only) once and record what it generated.

    `backends` other than TRITON exist for testing the plumbing on a CPU, where Inductor has no
    Triton templates; a packaged port always comes from the Triton-only lowering. `budget_s` bounds
    the autotuning (budget.py): past it every selection keeps the best configuration found so far.
    """
    import torch
    import triton
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.compile_fx import compile_fx
    from torch._inductor.decomposition import select_decomp_table
    from torch._inductor.utils import run_and_get_code

    from xe_forge.proposers.lower.budget import Budget, inductor_budget
    from xe_forge.proposers.lower.general.probe import model_config

    record: dict[str, Any] = {}
    table = {**select_decomp_table(), torch.ops.aten.convolution.default: convolution_decomposition}

    def compile_fn(gm: Any, example_inputs: list[Any]) -> Any:
        compiled = compile_fx(gm, example_inputs, decompositions=table)
        try:  # a port checks the guards per call; one that cannot be read is recorded as such
            record["guards"] = shape_guards()
        except Exception as err:
            record["guards"] = [f"(guards not recorded: {type(err).__name__})"]
        with contextlib.suppress(Exception):
            record["ranges"] = shape_ranges()
        return compiled

    before = {id(m) for m in _code_modules(PyCodeCache)}
    torch._dynamo.reset()
    budget = Budget(budget_s) if budget_s else None
    bounded = inductor_budget(budget) if budget is not None else contextlib.nullcontext([])
    config = model_config(model)
    with dynamo_settings(), inductor_settings(allow_tf32=allow_tf32, backends=backends), torch.no_grad(), bounded:
        compiled = torch.compile(model, backend=recording_backend(record, compile_fn), dynamic=True, fullgraph=True)
        started = time.perf_counter()
        result, codes = run_and_get_code(compiled, *inputs)
        compile_s = time.perf_counter() - started
        expected = model(*inputs)
    outs = result if isinstance(result, tuple | list) else [result]
    want = expected if isinstance(expected, tuple | list) else [expected]
    err = max((float((a.float() - b.float()).abs().max()) for a, b in zip(outs, want, strict=False)
               if torch.is_tensor(a)), default=0.0)
    names = {n for code in codes for n in KERNEL_DEF.findall(code)}
    return Lowering(
        problem=problem, dtype=dtype, ok=True, codes=list(codes), configs=autotuned_configs(PyCodeCache, before, names),
        placeholders=record["placeholders"], outputs=record["outputs"], returns_tuple=isinstance(result, tuple | list),
        guards=record.get("guards", []), extern=sorted({m for c in codes for m in EXTERN.findall(c)}),
        compile_s=round(compile_s, 2), rewrites=[REWRITE_NOTE] if _has_transposed_conv(model) else [],
        versions={"torch": torch.__version__, "triton": triton.__version__}, device=_device_name(inputs),
        max_abs_err=err, ranges=record.get("ranges", {}), config=config, budget_s=budget_s,
        budget_spent=bool(budget and budget.spent))


def _code_modules(cache: Any) -> list[Any]:
    mods = getattr(cache, "modules", None)
    if mods is None:
        mods = list(getattr(cache, "modules_no_attr", {}).values()) or list(getattr(cache, "cache", {}).values())
    return list(mods)


def autotuned_configs(cache: Any, before: set[int], names: set[str]) -> dict[str, LaunchConfig]:
    """The config each of the graph's kernels settled on (its autotuner keeps only the winner)."""
    out: dict[str, LaunchConfig] = {}
    for mod in _code_modules(cache):
        if id(mod) in before:
            continue
        for name, obj in vars(mod).items():
            launchers = getattr(obj, "launchers", None)
            if name not in names or not launchers:
                continue
            cfg = launchers[0].config
            meta = getattr(obj, "inductor_meta", None) or {}
            out[name] = LaunchConfig(kwargs=dict(cfg.kwargs), num_warps=cfg.num_warps, num_stages=cfg.num_stages,
                                     grid_type=meta.get("grid_type"))
    return out


def shape_guards() -> list[str]:
    """The shape assumptions Dynamo and Inductor made, written over the model's own values."""
    env, names = _shape_env()
    if env is None:
        return []
    out = []
    for guard in getattr(env, "guards", []):
        text = str(getattr(guard, "expr", guard))
        out.append(re.sub(r"\b[su]\d+\b", lambda m: names.get(m.group(0), m.group(0)), text))
    return list(dict.fromkeys(out))


def _shape_env() -> tuple[Any, dict[str, str]]:
    """Dynamo's shape environment of the graph being compiled, and its symbols' source expressions."""
    from torch._guards import TracingContext

    from xe_forge.proposers.lower.sources import source_expr

    ctx = TracingContext.try_get()
    env = getattr(getattr(ctx, "fake_mode", None), "shape_env", None)
    names: dict[str, str] = {}
    for sym, sources in (getattr(env, "var_to_sources", {}) if env is not None else {}).items():
        if sources:
            name = sources[0].name
            with contextlib.suppress(Exception):
                names[str(sym)] = source_expr(name() if callable(name) else name)
    return env, names


def shape_ranges() -> dict[str, list[int | None]]:
    """The value range Dynamo assumed for each size symbol ([2, None] unless a guard narrowed it)."""
    env, names = _shape_env()
    out: dict[str, list[int | None]] = {}
    for sym, bounds in (getattr(env, "var_to_range", {}) if env is not None else {}).items():
        if str(sym) not in names:
            continue
        lo, hi = getattr(bounds, "lower", None), getattr(bounds, "upper", None)
        out[names[str(sym)]] = [_finite(lo), _finite(hi)]
    return out


def _finite(value: Any) -> int | None:
    try:
        number = int(value)
    except Exception:  # sympy's infinities (int_oo) raise several kinds
        return None
    return number if abs(number) < 2**62 else None


def _has_transposed_conv(model: Any) -> bool:
    import torch.nn as nn

    kinds = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    return any(isinstance(m, kinds) for m in model.modules())


def _device_name(inputs: list[Any]) -> str | None:
    import torch

    tensor = next((x for x in inputs if torch.is_tensor(x)), None)
    if tensor is None or tensor.device.type == "cpu":
        return None
    module = getattr(torch, tensor.device.type, None)
    with contextlib.suppress(Exception):
        return module.get_device_name(tensor.device)
    return tensor.device.type
