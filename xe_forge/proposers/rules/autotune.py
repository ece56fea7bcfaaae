"""autotune (autotuning): wrap a kernel in @triton.autotune over the target's config space.

No single tile shape is best for every problem size and device, and the best one on Intel (256x256
tiles, 32 warps, 256-register GRF) is illegal or slow elsewhere; the knowledge base's config space
per problem class is what to search. The tile constexprs and launch options move from the launch
site into the configs, the grid becomes a function of META, and the key is the problem sizes. The
decorator names its own benchmark for Triton's interpreter (rules/portable.py), so the file runs as written
on the CPU too, without xe-forge.
"""

from __future__ import annotations

import json
from typing import Any

import libcst as cst

from xe_forge.proposers.rules.autotune_launch import launch_edits
from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, apply_edits, code_of, fresh_name, walk
from xe_forge.proposers.rules.kernels import Kernel, size_params, stored_and_read_pointers
from xe_forge.proposers.rules.launches import Launch, launches_of, tile_value
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.options import CONFIG_KEYWORDS, legalize_config
from xe_forge.proposers.rules.portable import portable_autotune
from xe_forge.proposers.rules.roles import map_keys
from xe_forge.proposers.rules.synth import conflicting_reader


def triton_alias(module: cst.Module) -> str | None:
    """The name the file imports triton under (`import triton` / `import triton as tr`), else None."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and alias.name.value == "triton":
                        return alias.asname.name.value if alias.asname else "triton"  # type: ignore[union-attr]
    return None


def with_triton_import(code: str) -> str:
    """`import triton` after the file's last top-level import (it only had `from triton import ...`)."""
    module = cst.parse_module(code)
    imports = [s for s in module.body if isinstance(s, cst.SimpleStatementLine)
               and any(isinstance(x, cst.Import | cst.ImportFrom) for x in s.body)]
    if not imports:
        raise NotApplicable("the file has no top-level imports to add `import triton` to")
    line = cst.parse_statement("import triton\n")
    return apply_edits(module, {imports[-1]: lambda updated: cst.FlattenSentinel([updated, line])})


def config_space(ctx: RecipeContext, kernel: Kernel) -> tuple[str | None, list[dict[str, Any]]]:
    """The first config-space entry with configs for the kernel's class (gemm-epilogue falls back to gemm)."""
    classes = [kernel.problem_class] + (["gemm"] if kernel.problem_class == "gemm-epilogue" else [])
    satisfies = getattr(ctx.toolchain, "satisfies", None)
    named = ctx.params.get("config_space")
    spaces = [e for e in ctx.config_spaces if e.get("id") == named] or ctx.config_spaces
    for name in classes:
        for entry in spaces:
            spec = entry.get("toolchain")
            if spec and satisfies is not None and not satisfies(spec):
                continue
            configs = (entry.get("config_space") or {}).get(name)
            if configs:
                return entry.get("id"), [dict(c) for c in configs]
    raise NotApplicable(f"no config space for problem class '{kernel.problem_class}' on {ctx.target}")


def _tunable_tiles(ctx: RecipeContext, kernel: Kernel, launches: list[Launch], keys: list[str]) -> tuple[list[str], list[str]]:
    """Config keys (kernel names) the configs may own: tiles that partition the grid or stride a
    loop, and whose value no other host statement depends on (a buffer sized by the tile)."""
    tunable, notes = [], []
    for key in keys:
        if not kernel.tunable(key):
            notes.append(f"{key} neither partitions the grid nor strides a loop in {kernel.name}")
            continue
        readers = []
        for launch in launches:
            arg = launch.bound().get(key)
            reader = conflicting_reader(ctx, launch, arg) if arg is not None else None
            if reader is not None:
                readers.append(f"{key} comes from `{code_of(arg.value)}`, which `{reader}` also reads")  # type: ignore[union-attr]
        notes += readers
        if not readers:
            tunable.append(key)
    return tunable, notes


def _launch_defaults(ctx: RecipeContext, launches: list[Launch], tiles: list[str]) -> dict[str, int]:
    """The value each tuned tile has at the launches today: it fills configs that do not set it
    (the autotuner passes only what a config holds, and the launch no longer passes the tile)."""
    defaults: dict[str, int] = {}
    for key in tiles:
        values = {getattr(tile_value(ctx.module, launch, key), "value", None) for launch in launches}
        if len(values) == 1 and None not in values:
            defaults[key] = values.pop()  # type: ignore[assignment]
    return defaults


def _incumbent(launches: list[Launch], tiles: list[str], defaults: dict[str, int]) -> dict[str, Any] | None:
    """The configuration the kernel is launched with today (its tiles, and the launch options every
    launch gives as the same literal), or None when the launches do not agree on it. Where the
    recipe's `keep_launch_config` asks, it joins the space last: the autotuner can keep what the kernel had (a lowering's tiles were already chosen
    by Inductor's own autotuning), and the interpreter, which takes the first config that fits,
    still checks one from the knowledge base."""
    if any(t not in defaults for t in tiles):
        return None
    config: dict[str, Any] = {t: defaults[t] for t in tiles}
    for option in CONFIG_KEYWORDS:
        values = {code_of(o.value) if (o := launch.options().get(option)) is not None else None for launch in launches}
        value = values.pop() if len(values) == 1 else None
        if value is not None and value.lstrip("-").isdigit():
            config[option] = int(value)
    return config


def _configs(ctx: RecipeContext, raw: list[dict[str, Any]], tiles: list[str], defaults: dict[str, int],
             incumbent: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    configs: list[dict[str, Any]] = []
    for config in raw:
        if any(k not in config and k not in defaults for k in tiles):
            continue  # a tile with different values at different launches and none in this config
        options = {k: v for k, v in config.items() if k not in tiles}
        config = {**{k: config.get(k, defaults.get(k)) for k in tiles}, **options}
        legal = legalize_config(config, set(tiles), ctx.target, ctx.toolchain)
        if legal is not None and legal not in configs:
            configs.append(legal)
    limit = ctx.params.get("max_configs")
    configs = configs[: int(limit)] if limit else configs
    legal = legalize_config(incumbent, set(tiles), ctx.target, ctx.toolchain) if incumbent else None
    if legal is not None and legal not in configs and ctx.params.get("keep_launch_config"):
        configs.append(legal)
    return configs


def _decorator(triton: str, configs: list[dict[str, Any]], key: list[str], restore: list[str],
               prune: str | None) -> cst.Decorator:
    lines = [f"{triton}.autotune(", "    configs=["]
    for config in configs:
        meta = {k: v for k, v in config.items() if k not in CONFIG_KEYWORDS}
        keywords = "".join(f", {k}={config[k]!r}" for k in CONFIG_KEYWORDS if k in config)
        lines.append(f"        {triton}.Config({json.dumps(meta)}{keywords}),")
    lines += ["    ],", f"    key={json.dumps(key)},"]
    if prune:
        lines.append(f'    prune_configs_by={{"early_config_prune": {prune}}},')
    if restore:
        lines.append(f"    restore_value={json.dumps(restore)},")
    lines.append(")")
    return cst.Decorator(decorator=cst.parse_expression("\n".join(lines)))


def _prune(name: str, kernel: Kernel, tiles: list[str]) -> cst.FunctionDef | None:
    """Dispatch by shape: drop configs whose tiles exceed the next power of two of the size they
    tile (a batch of 7 rows must not get 256-row tiles); keep the smallest config when none fits."""
    limits = {t: next(iter(kernel.tile_dims[t])) for t in tiles if len(kernel.tile_dims.get(t, ())) == 1}
    if not limits:
        return None
    pairs = ", ".join(f'"{t}": "{p}"' for t, p in limits.items())
    return cst.parse_statement(f'''def {name}(configs, named_args, **kwargs):
    """Dispatch by shape: no tile larger than the next power of two of the size it tiles."""
    sizes = {{**named_args, **kwargs}}
    limits = {{tile: max(16, triton.next_power_of_2(sizes[size])) for tile, size in {{{pairs}}}.items()}}
    fit = [c for c in configs if all(c.kwargs.get(t, 0) <= cap for t, cap in limits.items())]
    return fit or [min(configs, key=lambda c: [c.kwargs.get(t, 0) for t in limits])]
''')  # type: ignore[return-value]


def _autotune_kernel(ctx: RecipeContext, kernel: Kernel, used: list[str | None]) -> tuple[dict[cst.CSTNode, Edit], str]:
    if kernel.autotune is not None:
        raise NotApplicable("kernel already wrapped in @triton.autotune")
    if kernel.has_heuristics:
        raise NotApplicable("kernel uses @triton.heuristics; its meta-parameters are computed, not tuned")
    triton = triton_alias(ctx.module)
    entry_id, raw = config_space(ctx, kernel)
    launches = launches_of(ctx.launches, kernel)
    names = map_keys(kernel, list(dict.fromkeys(k for c in raw for k in c if k.isupper())))
    raw = [{names.get(k, k): v for k, v in c.items() if not k.isupper() or k in names} for c in raw]
    keys = list(dict.fromkeys(names.values()))
    tiles, notes = _tunable_tiles(ctx, kernel, launches, keys)
    defaults = _launch_defaults(ctx, launches, tiles)
    configs = _configs(ctx, raw, tiles, defaults, _incumbent(launches, tiles, defaults))
    if len(configs) < 2:
        why = f" ({'; '.join(dict.fromkeys(notes))})" if notes else ""
        raise NotApplicable(f"config space {entry_id} leaves fewer than two legal configs for {kernel.name}{why}")
    key = size_params(kernel)
    if not key:
        raise NotApplicable(f"cannot tell which parameters of {kernel.name} are problem sizes (no masks or loop bounds)")
    edits: dict[cst.CSTNode, Edit] = {}
    rebuilt = False
    for launch in launches:
        launch_edit, was_rebuilt = launch_edits(ctx, kernel, launch, tiles, triton or "triton")
        edits.update(launch_edit)
        rebuilt = rebuilt or was_rebuilt
    prune_name = fresh_name(f"_fit_{kernel.name.strip('_')}", {n.value for n in walk(ctx.module) if isinstance(n, cst.Name)})
    prune = _prune(prune_name, kernel, [t for t in tiles if t in kernel.grid_tiles])
    decorator = _decorator(triton or "triton", configs, key, stored_and_read_pointers(kernel), prune_name if prune else None)

    def decorate(fn: cst.CSTNode) -> cst.CSTNode | cst.FlattenSentinel:
        wrapped = fn.with_changes(decorators=[decorator, *fn.decorators])  # type: ignore[attr-defined]
        return cst.FlattenSentinel([prune, wrapped]) if prune is not None else wrapped

    edits[kernel.node] = decorate
    used.append(entry_id)
    grid_note = " (grid rebuilt from the kernel)" if rebuilt else ""
    return edits, (
        f"wrapped {kernel.name} in @triton.autotune over {len(configs)} {kernel.problem_class} configs "
        f"from {entry_id}, keyed on {', '.join(key)}{grid_note}"
    )


@register("autotune")
def autotune(ctx: RecipeContext) -> Applied:
    used: list[str | None] = []
    applied = per_kernel(ctx, lambda c, k: _autotune_kernel(c, k, used), "autotune")
    code = applied.code if triton_alias(ctx.module) else with_triton_import(applied.code)
    return Applied(code=portable_autotune(code), rationale=applied.rationale, entry_id=used[0] if used else None)
