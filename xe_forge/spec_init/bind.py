"""`spec init`'s binding of a problem file's sizes to its module constants (run inside the probe process).

Every integer module constant is rebound in the source (twice), the file imported again, and
get_inputs() / get_init_inputs() called on the meta device (shapes only, no memory); each input size
and constructor argument that moves is written as an expression over the constant that moved it
(`OUT_CHANNELS`, `2*HIDDEN`, `IN_FEATURES//2`, `A*B`). Constants that move nothing, or move sizes no
such expression fits, keep their values.
"""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path
from typing import Any

from xe_forge.problem.constants import module_constants, rewrite_constants

# ---------------------------------------------------------------- loading and sampling

class Loader:
    """Imports the file (or a rewrite of it) from the work directory under fresh module names."""

    def __init__(self, path: Path, workdir: Path) -> None:
        self.source = path.read_text()
        self.path = path
        self.workdir = workdir
        self.count = itertools.count()

    def module(self, overrides: dict[str, Any] | None = None):
        from xe_forge.problem.cases import import_from_path

        if not overrides:
            return import_from_path(self.path, "probe")
        copy = self.workdir / f"{self.path.stem}_probe{next(self.count)}.py"
        copy.write_text(rewrite_constants(self.source, overrides))
        return import_from_path(copy, "probe")

    def sample(self, overrides: dict[str, Any] | None = None) -> tuple[list[Any], list[Any]]:
        """get_inputs() and get_init_inputs() on the meta device: shapes without memory."""
        import torch

        module = self.module(overrides)
        with torch.device("meta"):
            return list(module.get_inputs()), list(module.get_init_inputs())


def _leaves(inputs: list[Any], inits: list[Any]) -> dict[str, int]:
    """Every integer the problem's sizes are made of, keyed by where it sits."""
    import torch

    out: dict[str, int] = {}
    for i, x in enumerate(inputs):
        if torch.is_tensor(x):
            out |= {f"in{i}.{j}": int(s) for j, s in enumerate(x.shape)}
    for i, a in enumerate(inits):
        if isinstance(a, int) and not isinstance(a, bool):
            out[f"init{i}"] = a
        elif isinstance(a, tuple | list):
            out |= {f"init{i}.{j}": v for j, v in enumerate(a) if isinstance(v, int) and not isinstance(v, bool)}
    return out


# ---------------------------------------------------------------- binding sizes to constants

def fit_one(name: str, xs: list[int], ns: list[int]) -> str | None:
    """An expression in one dim matching every (dim value, size) pair seen."""
    pairs = list(zip(xs, ns, strict=True))
    if all(n == x for x, n in pairs):
        return name
    for k in range(2, 65):
        if all(n == k * x for x, n in pairs):
            return f"{k}*{name}"
        if all(n == x // k for x, n in pairs):
            return f"{name}//{k}"
    d = ns[0] - xs[0]
    if all(n == x + d for x, n in pairs):
        return f"{name}+{d}" if d > 0 else f"{name}-{-d}"
    a = (ns[1] - ns[0]) / (xs[1] - xs[0])
    if a.is_integer() and a != 0:
        b = ns[0] - int(a) * xs[0]
        if all(n == int(a) * x + b for x, n in pairs):
            return f"{int(a)}*{name}" + (f"+{b}" if b > 0 else f"-{-b}" if b < 0 else "")
    return None


def fit_many(names: list[str], base: dict[str, int], moved: dict[str, tuple[int, int]], n0: int) -> str | None:
    """A product or sum of several dims: each dim's own perturbation must agree with it."""
    prod = math.prod(base[n] for n in names)
    if prod and n0 % prod == 0:
        k = n0 // prod
        if all(moved[n][1] == k * moved[n][0] * prod // base[n] for n in names):
            return "*".join(([str(k)] if k != 1 else []) + names)
    b = n0 - sum(base[n] for n in names)
    if all(moved[n][1] - n0 == moved[n][0] - base[n] for n in names):
        return "+".join(names) + (f"+{b}" if b > 0 else f"-{-b}" if b < 0 else "")
    return None


def _dim_names(constants: list[str]) -> dict[str, str]:
    names: dict[str, str] = {}
    for c in constants:
        name = c.upper()
        while name in names.values():
            name += "_"
        names[c] = name
    return names


def bind(loader: Loader) -> tuple[dict[str, str], dict[str, str], dict[str, int], list[Any], list[Any]]:
    """(dim -> constant, leaf -> expression, dim -> value, base inputs, base inits)."""
    consts = {k: v for k, v in module_constants(loader.source).items() if isinstance(v, int) and v > 0}
    inputs, inits = loader.sample()
    base = _leaves(inputs, inits)
    top = max([*consts.values(), *base.values(), 1])
    effects: dict[str, dict[str, list[int]]] = {}  # constant -> leaf -> sizes at its (value, p1, p2)
    values: dict[str, list[int]] = {}  # constant -> (value, p1, p2)
    frozen: set[str] = set()
    for i, (name, value) in enumerate(consts.items()):
        probes = [top + 1009 + 97 * i, top + 2003 + 89 * i]
        try:
            samples = [_leaves(*loader.sample({name: p})) for p in probes]
        except Exception:  # the file rejects other values of it: a structural constant
            frozen.add(name)
            continue
        if any(set(s) != set(base) for s in samples):
            frozen.add(name)
            continue
        values[name] = [value, *probes]
        effects[name] = {leaf: [base[leaf], samples[0][leaf], samples[1][leaf]] for leaf in base
                         if samples[0][leaf] != base[leaf]}
    while True:
        exprs, stuck = _expressions(values, effects, frozen, base)
        if not stuck:
            break
        frozen |= stuck
    used = [c for c in consts if c in effects and c not in frozen and effects[c]]
    names = _dim_names(used)
    exprs = {leaf: _rename(e, names) for leaf, e in exprs.items()}
    return ({names[c]: c for c in used}, exprs, {names[c]: consts[c] for c in used}, inputs, inits)


def _expressions(values: dict[str, list[int]], effects: dict[str, dict[str, list[int]]], frozen: set[str],
                 base: dict[str, int]) -> tuple[dict[str, str], set[str]]:
    """Each leaf's expression over constants; the constants that moved a leaf no expression fits."""
    exprs: dict[str, str] = {}
    stuck: set[str] = set()
    for leaf in base:
        movers = [c for c, eff in effects.items() if leaf in eff]
        if not movers:
            continue
        if any(c in frozen for c in movers):
            stuck |= set(movers) - frozen
            continue
        if len(movers) == 1:
            expr = fit_one(movers[0], values[movers[0]], effects[movers[0]][leaf])
        else:
            expr = fit_many(movers, {c: values[c][0] for c in movers},
                             {c: (values[c][1], effects[c][leaf][1]) for c in movers}, base[leaf])
        if expr is None:
            stuck |= set(movers)
        else:
            exprs[leaf] = expr
    return exprs, stuck


def _rename(expr: str, names: dict[str, str]) -> str:
    tree = ast.parse(expr, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
    return ast.unparse(tree).replace(" ", "")
