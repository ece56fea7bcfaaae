"""TorchDynamo source names -> the expression that reads the same value in the packaged forward.

Dynamo names every graph input by how it reached it from the frame: `L['self']._modules['fc']
._parameters['weight']` is `self.fc.weight`, `L['x'].size()[0]` is `x.size(0)`, `G['scale']` a
module global. The packaged forward binds each compiled-graph input from these expressions, so the
sizes, weights and scalars always come from the live model and its inputs, never from the shapes
the lowering happened to see.
"""

from __future__ import annotations

import ast

from xe_forge.proposers.lower.models import PackagingError

_FRAME = {"L", "G"}
_CONTAINERS = {"_modules", "_parameters", "_buffers"}
_SHAPE_METHODS = {"size", "stride"}


def source_expr(source: str) -> str:
    """`L['self']._modules['conv']._parameters['weight']` -> `self.conv.weight`."""
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise PackagingError(f"graph input '{source}': not a source name the packager can read") from None
    return ast.unparse(_rewrite(tree.body, source))


def _rewrite(node: ast.AST, source: str) -> ast.expr:
    if isinstance(node, ast.Subscript):
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        base = node.value
        if isinstance(base, ast.Name) and base.id in _FRAME and isinstance(key, str):
            return ast.Name(id=key, ctx=ast.Load())  # a forward argument, or a module global
        if isinstance(base, ast.Attribute) and base.attr in _CONTAINERS and isinstance(key, str):
            owner = _rewrite(base.value, source)
            if key.isidentifier():
                return ast.Attribute(value=owner, attr=key, ctx=ast.Load())
            if key.isdigit():  # nn.Sequential / nn.ModuleList entry
                return ast.Subscript(value=owner, slice=ast.Constant(int(key)), ctx=ast.Load())
            return ast.Subscript(value=owner, slice=ast.Constant(key), ctx=ast.Load())
        if (isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr in _SHAPE_METHODS
                and not base.args and isinstance(key, int)):
            owner = _rewrite(base.func.value, source)
            return ast.Call(func=ast.Attribute(value=owner, attr=base.func.attr, ctx=ast.Load()),
                            args=[ast.Constant(key)], keywords=[])
        if isinstance(key, int | str):
            return ast.Subscript(value=_rewrite(base, source), slice=ast.Constant(key), ctx=ast.Load())
    elif isinstance(node, ast.Attribute) and not node.attr.startswith("__"):
        return ast.Attribute(value=_rewrite(node.value, source), attr=node.attr, ctx=ast.Load())
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "storage_offset":
        return ast.Call(func=ast.Attribute(value=_rewrite(node.func.value, source), attr="storage_offset",
                                           ctx=ast.Load()), args=[], keywords=[])
    elif isinstance(node, ast.Name) and node.id == "self":
        return node
    raise PackagingError(f"graph input '{source}': the packager cannot express `{ast.unparse(node)}` in forward",
                         hint="the lowering reads a value the packaged forward has no way to reach")
