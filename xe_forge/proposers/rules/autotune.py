"""autotune (autotuning): wrap a kernel in @triton.autotune over the target's config space.

No single tile shape is best for every problem size and device, and the best one on Intel (256x256
tiles, 32 warps, 256-register GRF) is illegal or slow elsewhere; the knowledge base's config space
per problem class is what to search. The tile constexprs and launch options move from the launch
site into the configs, the grid becomes a function of META, and the key is the problem sizes.
"""

from __future__ import annotations

import json
from typing import Any

import libcst as cst

from xe_forge.proposers.rules.context import RecipeContext, per_kernel, register
from xe_forge.proposers.rules.cst_tools import Edit, walk
from xe_forge.proposers.rules.grid import grid_only_bindings, grid_var_private, match_sites, within
from xe_forge.proposers.rules.kernels import Kernel, size_params, stored_and_read_pointers
from xe_forge.proposers.rules.launches import Launch, TileValue, launches_of, tile_value, uses_of
from xe_forge.proposers.rules.meta_grid import plan_meta_grid
from xe_forge.proposers.rules.models import Applied, NotApplicable
from xe_forge.proposers.rules.options import CONFIG_KEYWORDS, legalize_config
from xe_forge.proposers.rules.tiles import launch_tiles


def triton_alias(module: cst.Module) -> str:
    """The name the file imports triton under (`import triton` / `import triton as tr`)."""
    for statement in module.body:
        for small in getattr(statement, "body", []):
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and alias.name.value == "triton":
                        return alias.asname.name.value if alias.asname else "triton"  # type: ignore[union-attr]
    raise NotApplicable("the file does not `import triton`, so triton.autotune cannot be referenced")


def config_space(ctx: RecipeContext, kernel: Kernel) -> tuple[str | None, list[dict[str, Any]]]:
    """The first config-space entry with configs for the kernel's class (gemm-epilogue falls back to gemm)."""
    classes = [kernel.problem_class] + (["gemm"] if kernel.problem_class == "gemm-epilogue" else [])
    satisfies = getattr(ctx.toolchain, "satisfies", None)
    for name in classes:
        for entry in ctx.config_spaces:
            spec = entry.get("toolchain")
            if spec and satisfies is not None and not satisfies(spec):
                continue
            configs = (entry.get("config_space") or {}).get(name)
            if configs:
                return entry.get("id"), [dict(c) for c in configs]
    raise NotApplicable(f"no config space for problem class '{kernel.problem_class}' on {ctx.target}")


def _host_uses(ctx: RecipeContext, launch: Launch, value: TileValue) -> bool:
    """Whether host code other than the launch and its grid reads the tile's variable."""
    if value.binding is None:
        return False
    scope = launch.scope or ctx.module
    grid = ctx.grid(launch)
    roots: list[cst.CSTNode] = [launch.call]
    if grid.binding is None or grid_var_private(grid, scope):  # a shared grid counts as other host code
        roots += [grid.root, *(b.value for b in grid_only_bindings(grid, scope, [value.arg.value]))]
    return any(not within(use, roots) for use in uses_of(scope, value.binding.name))


def _tunable_tiles(ctx: RecipeContext, kernel: Kernel, launches: list[Launch], keys: list[str]) -> tuple[list[str], list[str]]:
    tunable, notes = list(keys), []
    for launch in launches:
        usable, why = launch_tiles(ctx, kernel, launch, keys)
        notes += why
        for key in keys:
            if key in tunable and (key not in usable or _host_uses(ctx, launch, usable[key])):
                tunable.remove(key)
                if key in usable:
                    notes.append(f"{key}'s variable is also used by host code")
    return tunable, notes


def _launch_defaults(ctx: RecipeContext, launches: list[Launch], tiles: list[str]) -> dict[str, int]:
    """The value each tuned tile has at the launches today: it fills configs that do not set it
    (the autotuner passes only what a config holds, and the launch no longer passes the tile)."""
    defaults: dict[str, int] = {}
    for key in tiles:
        values = {tile_value(ctx.module, launch, key).value for launch in launches}  # type: ignore[union-attr]
        if len(values) == 1 and None not in values:
            defaults[key] = values.pop()  # type: ignore[assignment]
    return defaults


def _configs(ctx: RecipeContext, raw: list[dict[str, Any]], tiles: list[str], defaults: dict[str, int]) -> list[dict[str, Any]]:
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
    return configs[: int(limit)] if limit else configs


def _decorator(triton: str, configs: list[dict[str, Any]], key: list[str], restore: list[str]) -> cst.Decorator:
    lines = [f"{triton}.autotune(", "    configs=["]
    for config in configs:
        meta = {k: v for k, v in config.items() if k not in CONFIG_KEYWORDS}
        keywords = "".join(f", {k}={config[k]!r}" for k in CONFIG_KEYWORDS if k in config)
        lines.append(f"        {triton}.Config({json.dumps(meta)}{keywords}),")
    lines += ["    ],", f"    key={json.dumps(key)},"]
    if restore:
        lines.append(f"    restore_value={json.dumps(restore)},")
    lines.append(")")
    return cst.Decorator(decorator=cst.parse_expression("\n".join(lines)))


def _strip_launch(launch: Launch, tiles: dict[str, TileValue]) -> Edit:
    """Remove the tuned tiles and every launch option from the call; positional arguments after a
    removed one become keywords so the rest still bind to the right parameters."""
    removed = {id(v.arg) for v in tiles.values()} | {id(a) for a in launch.options().values()}
    indices = [i for i, arg in enumerate(launch.call.args) if id(arg) in removed]
    params = launch.kernel.params
    first_gap = min((i for i in indices if launch.call.args[i].keyword is None), default=None)

    def rewrite(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        args = []
        for i, arg in enumerate(updated.args):
            if i in indices:
                continue
            if first_gap is not None and i > first_gap and arg.keyword is None and i < len(params):
                arg = arg.with_changes(keyword=cst.Name(params[i]), equal=cst.AssignEqual(
                    cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            args.append(arg)
        if args and updated.args and args[-1] is not updated.args[-1]:
            args[-1] = args[-1].with_changes(comma=updated.args[-1].comma)
        return updated.with_changes(args=args)

    return rewrite


def _dead_statements(scope: cst.CSTNode, bindings: list) -> dict[cst.CSTNode, Edit]:
    """The statement lines holding only these assignments, marked for removal."""
    targets = {id(b.assign) for b in bindings if not b.at_module}
    return {
        line: cst.RemovalSentinel.REMOVE
        for line in walk(scope)
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and id(line.body[0]) in targets
    }


def _autotune_kernel(ctx: RecipeContext, kernel: Kernel, used: list[str | None]) -> tuple[dict[cst.CSTNode, Edit], str]:
    if kernel.autotune is not None:
        raise NotApplicable("kernel already wrapped in @triton.autotune")
    if kernel.has_heuristics:
        raise NotApplicable("kernel uses @triton.heuristics; its meta-parameters are computed, not tuned")
    triton = triton_alias(ctx.module)
    entry_id, raw = config_space(ctx, kernel)
    launches = launches_of(ctx.launches, kernel)
    keys = list(dict.fromkeys(k for c in raw for k in c if k.isupper() and k in kernel.constexprs))
    tiles, notes = _tunable_tiles(ctx, kernel, launches, keys)
    configs = _configs(ctx, raw, tiles, _launch_defaults(ctx, launches, tiles))
    if len(configs) < 2:
        why = f" ({'; '.join(dict.fromkeys(notes))})" if notes else ""
        raise NotApplicable(f"config space {entry_id} leaves fewer than two legal configs for {kernel.name}{why}")
    key = size_params(kernel)
    if not key:
        raise NotApplicable(f"cannot tell which parameters of {kernel.name} are problem sizes (no masks or loop bounds)")
    edits: dict[cst.CSTNode, Edit] = {}
    for launch in launches:
        values = {k: tile_value(ctx.module, launch, k) for k in tiles}
        grid = ctx.grid(launch)
        owner = match_sites(grid, kernel, values, {k: f"META[{k}]" for k in tiles})  # type: ignore[arg-type]
        scope = launch.scope or ctx.module
        plan = plan_meta_grid(grid, owner, values, triton, scope)  # type: ignore[arg-type]
        edits.update(plan.edits)
        edits[launch.call] = _strip_launch(launch, values)  # type: ignore[arg-type]
        dead = plan.dead + [v.binding for v in values.values() if v and v.binding and not _host_uses(ctx, launch, v)]
        edits.update(_dead_statements(scope, dead))
    decorator = _decorator(triton, configs, key, stored_and_read_pointers(kernel))
    edits[kernel.node] = lambda fn: fn.with_changes(decorators=[decorator, *fn.decorators])
    used.append(entry_id)
    return edits, (
        f"wrapped {kernel.name} in @triton.autotune over {len(configs)} {kernel.problem_class} configs "
        f"from {entry_id}, keyed on {', '.join(key)}"
    )


@register("autotune")
def autotune(ctx: RecipeContext) -> Applied:
    used: list[str | None] = []
    applied = per_kernel(ctx, lambda c, k: _autotune_kernel(c, k, used), "autotune")
    return Applied(code=applied.code, rationale=applied.rationale, entry_id=used[0] if used else None)
