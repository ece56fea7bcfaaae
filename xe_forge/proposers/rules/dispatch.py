"""propose_rules: the knowledge base's recipe entries applied to a kernel file, as candidates.

Each recipe entry names a transform (kb-contract.md); the transform checks its preconditions on the
parsed source and either yields a whole new kernel file or a precise reason it does not apply. The
dispatcher never raises for a bad kernel or a bad entry: everything that does not become a Proposal
becomes a Skip, so the CoVeR loop can show why a stage had nothing to try.
"""

from __future__ import annotations

from typing import Any

from xe_forge.proposers.rules import (  # noqa: F401  (each module registers its transform)
    activations,
    autotune,
    block_io,
    conv,
    dtype,
    fuse_epilogue,
    launch_options,
    persistent,
    swizzle,
    tiles,
)
from xe_forge.proposers.rules.context import REGISTRY, RecipeContext
from xe_forge.proposers.rules.models import Applied, NotApplicable, Proposal, Skip
from xe_forge.proposers.rules.options import ToolchainLike

DEFAULT_EFFECTS = {
    "drop-dot-upcast": "tl.dot on 16-bit operands runs on the matrix engine (DPAS / tensor cores) instead of the fp32 path",
    "fp64-to-fp32": "float32 arithmetic runs many times faster than float64 on GPUs, which have few or no fp64 units",
    "exp2-activations": "exp2 is a single native instruction; exp costs an extra multiply or a slower sequence",
    "launch-options": "launch options the knowledge base recommends for the target's register file and execution width",
    "tile-sizes": "tiles at the matrix-engine granularity reuse each loaded element more and fill the hardware",
    "autotune": "the best tile shape and warp count depend on the problem size; autotuning picks them per size",
    "group-swizzle": "grouped tile order keeps operand panels in L2 across neighbouring programs",
    "fuse-epilogue": "the GEMM output never round-trips through memory: the epilogue runs on the accumulator",
    "persistent-loop": "one program per core loops over the tiles: no per-tile launch cost and no idle tail wave",
    "tensor-descriptors": "TMA (Hopper) and 2D block loads (Intel Xe) move whole tiles instead of gathering pointers",
    "conv-implicit-gemm": "the convolution runs as a Triton implicit GEMM on the matrix engine, bias fused",
}


def _toolchain_ok(entry: dict[str, Any], toolchain: ToolchainLike) -> str | None:
    spec = entry.get("toolchain")
    satisfies = getattr(toolchain, "satisfies", None)
    if spec and satisfies is not None:
        try:
            if not satisfies(spec):
                return f"entry needs {spec}; this run has {toolchain.name} {toolchain.version}"
        except ValueError as err:
            return f"entry toolchain range is malformed: {err}"
    return None


def _apply(name: str, ctx: RecipeContext) -> Applied:
    try:
        return REGISTRY[name](ctx)
    except NotApplicable:
        raise
    except Exception as err:  # a transform bug must cost one candidate, never the run
        raise NotApplicable(f"internal error in the {name} transform: {type(err).__name__}: {err}") from err


def propose_rules(
    source: str,
    *,
    stage: str,
    target: str,
    toolchain: ToolchainLike,
    recipes: list[dict[str, Any]],
    config_spaces: list[dict[str, Any]],
    reference: str = "",
) -> tuple[list[Proposal], list[Skip]]:
    """Candidates from the recipe entries for this stage, target and toolchain, and the recipes skipped.

    Args:
        source: the current kernel file.
        stage: the stage being run; in `autotuning`, config spaces are applied even without an
            explicit `autotune` recipe entry.
        target: knowledge-base target name, e.g. 'intel-xe2'.
        toolchain: the run's Toolchain (name, version, satisfies()).
        recipes: KB recipe entries as plain dicts (id, recipe: {name, params, expected_effect}, ...).
        config_spaces: KB config_space entries for the target as plain dicts.
        reference: the PyTorch reference's source (fuse-epilogue traces it).

    Example:
        >>> proposals, skips = propose_rules(src, stage="dtype", target="intel-xe2", toolchain=tc,
        ...                                  recipes=[{"id": "x", "recipe": {"name": "drop-dot-upcast"}}],
        ...                                  config_spaces=[])
    """
    proposals: list[Proposal] = []
    skips: list[Skip] = []
    entries = [e for e in recipes if e.get("kind", "recipe") == "recipe"]
    if stage == "autotuning" and config_spaces and not any((e.get("recipe") or {}).get("name") == "autotune" for e in entries):
        entries.append({"id": None, "recipe": {"name": "autotune", "params": {}}})
    for entry in entries:
        recipe = entry.get("recipe") or {}
        name, entry_id = str(recipe.get("name")), entry.get("id")
        if name not in REGISTRY:
            skips.append(Skip(recipe=name, entry_id=entry_id, reason=f"unknown recipe name '{name}'"))
            continue
        stages = entry.get("stages")
        problem = _toolchain_ok(entry, toolchain) or (
            f"entry is for stages {stages}, not '{stage}'" if stages and stage and stage not in stages else None
        )
        if problem:
            skips.append(Skip(recipe=name, entry_id=entry_id, reason=problem))
            continue
        ctx = RecipeContext(source=source, params=dict(recipe.get("params") or {}), target=target, toolchain=toolchain,
                      stage=stage, config_spaces=list(config_spaces),
                      preconditions=[str(p) for p in recipe.get("preconditions") or []], reference=reference)
        try:
            applied = _apply(name, ctx)
        except NotApplicable as err:
            skips.append(Skip(recipe=name, entry_id=entry_id, reason=err.reason))
            continue
        used_id = applied.entry_id or entry_id
        duplicate = next((p for p in proposals if p.code == applied.code), None)
        if ctx.unchanged(applied.code) or duplicate is not None:
            why = "the transform left the source unchanged" if duplicate is None else (
                f"same code as the {duplicate.recipe} proposal from {duplicate.entry_id}")
            skips.append(Skip(recipe=name, entry_id=entry_id, reason=why))
            continue
        proposals.append(Proposal(
            code=applied.code, recipe=name, entry_id=used_id, rationale=applied.rationale,
            expected_effect=str(recipe.get("expected_effect") or entry.get("summary") or DEFAULT_EFFECTS[name]),
        ))
    return proposals, skips
