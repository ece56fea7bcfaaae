"""Code that only a torch.autograd.Function's `backward` can run: the training path's own.

A Triton forward wrapped in an autograd.Function may write its gradient in torch (red team 7 h07), and
a recompute backward does so under `torch.enable_grad()` with `torch.autograd.grad` (red team 8 h13),
often through a helper of its own (`_dmish`, h13b). None of that runs in a forward: autograd calls
`backward` after the model's call has returned. So the static scans leave out the `backward` methods of
the file's autograd.Function classes and every module-level function whose every reference (transitively)
sits inside such code. A function named anywhere else (forward, module level, a default argument, handed
on as a value) is forward-time code and scanned as before. A forward that reaches backward-only code
anyway (`Fn.backward(None, x)` called directly) runs its torch work under the dispatch audit, which
judges it as any other torch work (tests/verify/fixtures/autograd/backward_window.py).
"""

from __future__ import annotations

import ast

from xe_forge.verify.escapes import dotted

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# torch paths host code may use only inside backward-only code: a recompute backward switches grad on
# for its own graph and differentiates it; in a forward they would change the caller's autograd state
BACKWARD_PATHS = frozenset({"torch.enable_grad", "torch.autograd.grad"})


def _function_classes(tree: ast.Module, aliases: dict[str, str]) -> list[ast.ClassDef]:
    return [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
            and any(dotted(b, aliases) == "torch.autograd.Function" for b in c.bases)]


def enclosing_chains(tree: ast.Module) -> dict[int, list[int]]:
    """Node id -> the ids of the functions around it, innermost first (for `inside`)."""
    out: dict[int, list[int]] = {}
    stack: list[tuple[ast.AST, list[int]]] = [(tree, [])]
    while stack:
        node, chain = stack.pop()
        for child in ast.iter_child_nodes(node):
            out[id(child)] = chain
            stack.append((child, [id(child), *chain] if isinstance(child, FUNCTIONS) else chain))
    return out


def backward_only(tree: ast.Module, aliases: dict[str, str]) -> set[int]:
    """Ids of the functions only autograd's backward runs: the `backward` methods of the file's
    autograd.Function classes, and module-level functions referenced only from inside them (a function's
    references to itself do not count for or against it). A name that is shadowed or rebound anywhere
    (assigned, a parameter, imported) is not followed: its references could be to something else."""
    out = {id(f) for c in _function_classes(tree, aliases) for f in c.body
           if isinstance(f, ast.FunctionDef) and f.name == "backward"}
    helpers = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.decorator_list}
    rebound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    rebound |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    rebound |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}
    rebound |= {n.name for n in ast.walk(tree) if isinstance(n, (*FUNCTIONS[:2], ast.ClassDef))
                and helpers.get(getattr(n, "name", "")) is not n}
    chains = enclosing_chains(tree)
    uses: dict[str, list[list[int]]] = {name: [] for name in helpers if name not in rebound}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in uses:
            uses[node.id].append(chains.get(id(node), []))
    changed = True
    while changed:
        changed = False
        for name, chains_of_uses in uses.items():
            fn = helpers[name]
            if id(fn) in out or not chains_of_uses:
                continue
            if all(id(fn) in chain or any(f in out for f in chain) for chain in chains_of_uses) \
                    and any(id(fn) not in chain for chain in chains_of_uses):
                out.add(id(fn))
                changed = True
    return out


def inside(node: ast.AST, functions: set[int], chains: dict[int, list[int]]) -> bool:
    """Whether `node` sits inside one of `functions` (at any depth of nesting)."""
    return any(f in functions for f in chains.get(id(node), []))

