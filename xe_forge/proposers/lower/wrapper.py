"""Reading an Inductor wrapper module: its kernels (source inline) and its `call` function.

The wrapper Inductor writes for a graph defines each kernel as
`name = async_compile.triton('name', '''<kernel module>''', device_str=...)` and one `call(args)`
(a `Runner.call` method in recent versions) that unpacks the graph inputs, allocates buffers and
launches the kernels. Only these two parts matter to the packager; the rest is Inductor's runtime.
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict

from xe_forge.proposers.lower.kernels import KernelDef, parse_kernel
from xe_forge.proposers.lower.models import PackagingError


class Wrapper(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    kernels: dict[str, KernelDef]
    call: ast.FunctionDef
    arg_names: list[str]


def parse_wrapper(code: str) -> Wrapper:
    tree = ast.parse(code)
    kernels: dict[str, KernelDef] = {}
    call: ast.FunctionDef | None = None
    for node in tree.body:
        compiled = _async_compile(node)
        if compiled is not None:
            name, source = compiled
            kernels[name] = parse_kernel(name, source)
        elif isinstance(node, ast.FunctionDef) and node.name == "call":
            call = node
        elif isinstance(node, ast.ClassDef) and node.name == "Runner":
            call = next((m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "call"), call)
    if call is None:
        raise PackagingError("the wrapper module has no call(args) function")
    if _uses_partitions(call):
        raise PackagingError("the wrapper runs graph partitions (lower with graph_partition off)")
    return Wrapper(kernels=kernels, call=call, arg_names=_unpacked_args(call))


def _async_compile(node: ast.AST) -> tuple[str, str] | None:
    """`x = async_compile.triton('x', '''src''', ...)` -> (name, src); any other kind is refused."""
    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "async_compile"):
        return None
    args = node.value.args
    if func.attr != "triton":
        name = node.targets[0].id if isinstance(node.targets[0], ast.Name) else f"line {node.lineno}"
        raise PackagingError(f"kernel {name} is an async_compile.{func.attr} kernel, not Triton: it cannot be "
                             "packaged (Inductor emits Triton only for a GPU)")
    if len(args) < 2 or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args[:2]):
        raise PackagingError(f"cannot read the kernel defined at line {node.lineno} of the wrapper")
    return args[0].value, args[1].value


def _unpacked_args(call: ast.FunctionDef) -> list[str]:
    """The graph inputs, in order: `arg0_1, arg1_1 = args` (a single input may be `arg0_1, = args`)."""
    for stmt in call.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id == "args":
            target = stmt.targets[0]
            elts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
            if all(isinstance(e, ast.Name) for e in elts):
                return [e.id for e in elts]
    if not any(isinstance(a, ast.arg) and a.arg == "args" for a in call.args.args):
        raise PackagingError("the wrapper's call() takes no `args` list")
    return []


def _uses_partitions(call: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "partitions" for n in ast.walk(call))
