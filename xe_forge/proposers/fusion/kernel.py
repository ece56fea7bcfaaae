"""A phase as a complete @triton.jit function: decorators, signature, program mapping, GEMM main loop.

GEMM phases use the KB's GEMM template: grouped (GROUP_SIZE_M) launch order over a 1-D grid, an fp32
accumulator fed `acc = tl.dot(a, b, acc)` with 16-bit operands as loaded, the K loop either over
pointer tiles (rows and columns wrapped with `% M` / `% N` so only K is masked, as Triton's matmul
tutorial does) or over tensor descriptors (TMA on Hopper, 2D block I/O on Intel Xe), and autotuning
over the target's config space with shape-aware pruning. Tile phases take a 2-D grid of fixed tiles;
rows phases a 1-D grid over row blocks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from xe_forge.proposers.fusion.ir import Node
from xe_forge.proposers.fusion.naming import HostNames, ident
from xe_forge.proposers.fusion.plan import Phase, Plan
from xe_forge.proposers.fusion.writer import Arg, KernelWriter

CONFIG_KEYWORDS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


@dataclass
class EmitOptions:
    """What the recipe entry and the target choose; the generator itself has no tuning constants."""

    io: str = "pointer"
    """'pointer' (tensors of pointers) or 'descriptor' (tl.make_tensor_descriptor, with a pointer fallback)."""
    configs: list[dict[str, Any]] = field(default_factory=list)
    """Autotune configs of the GEMM phases (tiles, GROUP_SIZE_M, launch options)."""
    slot_n: int = 64
    """Columns per partial statistic; divides every BLOCK_N in `configs`."""
    tile_m: int = 32
    tile_n: int = 128
    rows_m: int = 64
    config_space: str | None = None


@dataclass
class KernelText:
    name: str
    source: str
    args: list[Arg]
    phase: Phase
    grid: str
    launch_keywords: dict[str, str]
    prelude: list[str] = field(default_factory=list)
    """Host lines the launch needs first (a tile width computed from group sizes)."""


def _header(w: KernelWriter, gemm: Node | None) -> list[str]:
    m = w.arg("M", "M")
    if w.phase.kind == "rows":
        return ["pid_m = tl.program_id(0)", "offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)", f"mask_m = offs_m < {m}"]
    n = w.arg("N", w.host.count(w.phase.domain))
    if gemm is not None:
        lines = [
            "# grouped launch order: GROUP_SIZE_M row-tiles share each column panel of W while it is in cache",
            "pid = tl.program_id(0)",
            f"num_pid_m = tl.cdiv({m}, BLOCK_M)",
            f"num_pid_n = tl.cdiv({n}, BLOCK_N)",
            "num_pid_in_group = GROUP_SIZE_M * num_pid_n",
            "first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M",
            "group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)",
            "pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)",
            "pid_n = (pid % num_pid_in_group) // group_size_m",
        ]
    else:
        lines = ["pid_m = tl.program_id(0)", "pid_n = tl.program_id(1)"]
    return lines + [
        "offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        "offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        f"mask_m = offs_m < {m}",
        f"mask_n = offs_n < {n}",
        "mask = mask_m[:, None] & mask_n[None, :]",
    ]


def _mainloop(w: KernelWriter, gemm: Node, tma: bool) -> list[str]:
    source = w.plan.node(gemm.args[0].ref or "")
    a_host = source.host if source.op == "input" else w.host.stored(source.id)
    index = w.host.gemm_index(gemm.cols)
    nk = gemm.attrs["layout"] == "nk"
    w.arg("a_ptr", a_host)
    w.arg("b_ptr", f"w{index}")
    k = w.arg("K", f"K{index}")
    sam = w.arg("stride_am", f"{a_host}.stride(0)")
    sbn = w.arg("stride_bn", f"w{index}.stride({0 if nk else 1})")
    what = f"acc = A @ W{'^T' if nk else ''} over K: {a_host} [M, K] times {gemm.attrs['weight']}"
    if tma:
        sbk = w.arg("stride_bk", f"w{index}.stride({1 if nk else 0})")
        b_desc = (f"tl.make_tensor_descriptor(b_ptr, shape=[N, {k}], strides=[{sbn}, 1], block_shape=[BLOCK_N, BLOCK_K])"
                  if nk else
                  f"tl.make_tensor_descriptor(b_ptr, shape=[{k}, N], strides=[{sbk}, 1], block_shape=[BLOCK_K, BLOCK_N])")
        load_b = "b_desc.load([pid_n * BLOCK_N, k * BLOCK_K])" if nk else "b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])"
        w.setup += [
            f"# {what}; tensor descriptors (TMA / 2D block loads) zero-fill out of bounds",
            f"a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, {k}], strides=[{sam}, 1], "
            "block_shape=[BLOCK_M, BLOCK_K])",
            f"b_desc = {b_desc}",
        ]
        return [
            "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
            f"for k in range(0, tl.cdiv({k}, BLOCK_K)):",
            "    a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])",
            f"    b = {load_b}",
            f"    acc = tl.dot(a, {'b.T' if nk else 'b'}, acc, input_precision=DOT_PRECISION)",
        ]
    sak = w.arg("stride_ak", f"{a_host}.stride(1)")
    sbk = w.arg("stride_bk", f"w{index}.stride({1 if nk else 0})")
    return [
        f"# {what}; rows and columns wrap (% M, % N) so only K needs a mask",
        "rows = offs_m % M",
        "cols = offs_n % N",
        "offs_k = tl.arange(0, BLOCK_K)",
        f"a_ptrs = a_ptr + rows[:, None] * {sam} + offs_k[None, :] * {sak}",
        f"b_ptrs = b_ptr + offs_k[:, None] * {sbk} + cols[None, :] * {sbn}",
        "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        f"for k in range(0, tl.cdiv({k}, BLOCK_K)):",
        f"    k_left = {k} - k * BLOCK_K",
        "    a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)",
        "    b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)",
        "    acc = tl.dot(a, b, acc, input_precision=DOT_PRECISION)",
        f"    a_ptrs += BLOCK_K * {sak}",
        f"    b_ptrs += BLOCK_K * {sbk}",
    ]


def _autotune(w: KernelWriter, options: EmitOptions, prune: str) -> str:
    lines = ["@triton.autotune(", "    configs=["]
    for config in options.configs:
        meta = {k: v for k, v in config.items() if k not in CONFIG_KEYWORDS}
        keywords = "".join(f", {k}={config[k]!r}" for k in CONFIG_KEYWORDS if k in config)
        lines.append(f"        triton.Config({json.dumps(meta)}{keywords}),")
    lines += ["    ],", '    key=["M", "N", "K"],', f'    prune_configs_by={{"early_config_prune": {prune}}},']
    zeroed = [f"st_{ident(s.node)}_count_ptr" for s in w.phase.partials if s.family == "col"]
    if zeroed:
        lines.append(f"    reset_to_zero={json.dumps(zeroed)},  # rows of batch partials a trial's smaller tiles left")
    lines.append(")")
    return "\n".join(lines)


def _prune(name: str, w: KernelWriter) -> str:
    groups = [a.name for a in w.args if a.constexpr and a.name.startswith("G_")]
    group_rule = "".join(f' and c.kwargs["BLOCK_N"] % kwargs["{g}"] == 0' for g in groups)
    return f'''def {name}(configs, named_args, **kwargs):
    """Dispatch by shape: tiles no larger than the problem needs (a batch of 7 rows gets the smallest
    row tile, not 256), whole groups per tile where a group norm is fused; else the smallest tiles."""
    rows = max(16, triton.next_power_of_2(named_args["M"]))
    cols = max(16, triton.next_power_of_2(named_args["N"]))
    fit = [c for c in configs if c.kwargs["BLOCK_M"] <= rows and c.kwargs["BLOCK_N"] <= cols{group_rule}]
    if fit:
        return fit
    legal = [c for c in configs if True{group_rule}] or configs
    smallest = min(c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] for c in legal)
    return [c for c in legal if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] == smallest][:1]
'''


def write_kernel(plan: Plan, phase: Phase, host: HostNames, options: EmitOptions, suffix: str,
                 tma: bool = False) -> tuple[KernelText, str, set[str]]:
    """The kernel of one phase, its prune function (GEMM phases) and the helpers it needs."""
    name = f"_phase{phase.index}_{phase.kind}{suffix}{'_tma' if tma else ''}_kernel"
    w = KernelWriter(plan, phase, host, name)
    gemm = plan.node(phase.gemm) if phase.gemm else None
    w.lines = _header(w, gemm)
    if gemm is not None:
        w.lines += _mainloop(w, gemm, tma)
        w.lines = w.setup + w.lines  # tile-independent setup first (a persistent loop keeps it outside)
    w.sinks()
    constexprs = ["BLOCK_M"] + ([] if phase.kind == "rows" else ["BLOCK_N"])
    if gemm is not None:
        constexprs += ["BLOCK_K", "GROUP_SIZE_M", "DOT_PRECISION"]
        w.arg("DOT_PRECISION", "precision", constexpr=True)
    runtime = sorted((a for a in w.args if not a.constexpr), key=_arg_order)
    extra = [a for a in w.args if a.constexpr and a.name not in constexprs]
    params = [a.name for a in runtime] + [f"{c}: tl.constexpr" for c in constexprs if c != "DOT_PRECISION"]
    params += [f"{a.name}: tl.constexpr" for a in extra]
    if gemm is not None:
        params.append("DOT_PRECISION: tl.constexpr")
    doc = _docstring(plan, phase)
    body = "\n".join("    " + line for line in [doc, *w.lines])
    signature = f"def {name}(\n" + "".join(f"    {p},\n" for p in params) + "):"
    prune = ""
    decorators = "@triton.jit"
    if gemm is not None:
        prune_name = f"_fit_{name.strip('_').removesuffix('_kernel')}"
        prune = _prune(prune_name, w)
        decorators = _autotune(w, options, prune_name) + "\n@triton.jit"
    ordered = runtime + [a for a in w.args if a.constexpr]
    grid, keywords, prelude = _launch(plan, phase, host, options)
    text = KernelText(name, f"{decorators}\n{signature}\n{body}\n", ordered, phase, grid, keywords, prelude)
    return text, prune, w.needs


def _arg_order(arg: Arg) -> int:
    """Pointers first, then sizes, strides and scalars: the order a reader expects."""
    if arg.name.endswith("_ptr"):
        return 0
    if arg.name in ("M", "N", "K") or arg.name.startswith(("N_", "C_", "S_", "G_")):
        return 1
    return 2 if "stride" in arg.name else 3


def _docstring(plan: Plan, phase: Phase) -> str:
    what = {"gemm": "GEMM with its epilogue", "tile": "one tile of a stored value", "rows": "a block of rows"}
    computed = ", ".join(f"{n} ({plan.node(n).op})" for n in phase.nodes if plan.node(n).op != "gemm")
    parts = [f"Launch {phase.index}: {what[phase.kind]} per program."]
    if computed:
        parts.append(f"Computes {computed}.")
    if phase.partials:
        parts.append("Writes partial statistics of " + ", ".join(f"{s.node} ({s.combine})" for s in phase.partials) + ".")
    if phase.stores:
        parts.append("Stores " + ", ".join(phase.stores) + " for a later launch.")
    return '"""' + " ".join(parts) + '"""'


def _launch(plan: Plan, phase: Phase, host: HostNames, options: EmitOptions) -> tuple[str, dict[str, str], list[str]]:
    """Grid, tile keywords and host lines of one launch."""
    if phase.kind == "gemm":
        count = host.count(phase.domain)
        return (f'lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv({count}, META["BLOCK_N"]),)',
                {}, [])
    if phase.kind == "rows":
        return f"(triton.cdiv(M, {options.rows_m}),)", {"BLOCK_M": str(options.rows_m)}, []
    groups = [host.group(n) for n in phase.nodes if plan.node(n).op == "group_norm" and n not in plan.stats]
    width = max(options.tile_n, options.slot_n)
    if not groups:
        grid = f"(triton.cdiv(M, {options.tile_m}), triton.cdiv({host.count(phase.domain)}, {width}))"
        return grid, {"BLOCK_M": str(options.tile_m), "BLOCK_N": str(width)}, []
    var = f"tile_n{phase.index}"
    grid = f"(triton.cdiv(M, {options.tile_m}), triton.cdiv({host.count(phase.domain)}, {var}))"
    return grid, {"BLOCK_M": str(options.tile_m), "BLOCK_N": var}, [f"{var} = max({width}, {', '.join(groups)})"]


__all__ = ["EmitOptions", "KernelText", "ident", "write_kernel"]
