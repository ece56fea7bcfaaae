"""Inductor's `call(args)` -> the body of the packaged model's forward.

What changes: graph inputs are bound from the live model and its inputs (sources.py); buffers are
allocated with torch.empty_strided on the inputs' device (never a hard-coded 'cuda'); Inductor's
`kernel.run(..., stream=)` becomes `kernel[grid](..., BLOCK=..., num_warps=..., num_stages=...)`
with the grid its decorator's grid rule would compute; device guards, raw streams and size asserts
go, except shape asserts that pin a size (Inductor specialized it): those become one clear error.
Library calls Inductor kept (extern_kernels.*, aten.*) stay as torch calls and are listed.
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from xe_forge.proposers.lower.kernels import KernelDef
from xe_forge.proposers.lower.models import LaunchConfig, Lowering, PackagingError, Placeholder
from xe_forge.proposers.lower.sources import source_expr
from xe_forge.proposers.lower.wrapper import Wrapper

DEVICE = "_dev"
EMPTY = {"empty_strided_cuda": DEVICE, "empty_strided_xpu": DEVICE, "empty_strided_mtia": DEVICE,
         "empty_strided_cpu": "'cpu'"}
DROPPED_CALLS = {"assert_alignment", "set_device", "synchronize"}
GLOBAL_NAMES = {"torch", "math", "triton", "tl", DEVICE} | set(dir(builtins))
# grid rule (Inductor's grid_type) -> (x, y, z), in the kernel's size parameters and block constexprs
GRIDS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "Grid1D": (("xnumel", "XBLOCK"),),
    "Grid2D": (("xnumel", "XBLOCK"), ("ynumel", "YBLOCK")),
    "Grid3D": (("xnumel", "XBLOCK"), ("ynumel", "YBLOCK"), ("znumel", "ZBLOCK")),
    "BatchMatmulGrid3D": (("znumel", "ZBLOCK"), ("ynumel", "YBLOCK"), ("xnumel", "XBLOCK")),
    "CooperativeReductionGrid": (("RSPLIT", None), ("xnumel", "XBLOCK")),
    "SplitScanGrid": (("r0_numel", "R0_BLOCK"), ("xnumel", None)),
    "MixOrderReductionGrid": (("xnumel", "RSPLIT_SIZE"),),
}
MAX_Y_GRID = 65535


def build_forward(wrapper: Wrapper, lowering: Lowering, forward_params: list[str]) -> tuple[list[str], list[str]]:
    """Forward body lines (unindented) and the library calls it keeps."""
    placeholders = lowering.placeholders or []
    if len(placeholders) != len(wrapper.arg_names):
        raise PackagingError(f"the compiled graph takes {len(wrapper.arg_names)} inputs but the lowering recorded "
                             f"{len(placeholders)} sources for them")
    clash = set(forward_params) & (set(wrapper.arg_names) | {DEVICE})
    if clash:
        raise PackagingError(f"forward argument(s) {sorted(clash)} clash with names the packaged forward uses")
    lines = [f"{name} = {_binding(ph)}" for name, ph in zip(wrapper.arg_names, placeholders, strict=True)]
    lines.append(f"{DEVICE} = {_device_source(wrapper.arg_names, placeholders, forward_params)}.device")
    rewriter = _CallRewriter(wrapper.kernels, lowering.configs, {n for n, p in zip(wrapper.arg_names, placeholders,
                                                                                 strict=True) if p.kind == "scalar"},
                             dict(zip(wrapper.arg_names, placeholders, strict=True)), lowering)
    body = rewriter.statements(wrapper.call.body)
    _check_names(body, set(forward_params) | set(wrapper.arg_names) | set(wrapper.kernels) | rewriter.helpers)
    lines += [ast.unparse(stmt) for stmt in body]
    return lines, sorted(rewriter.extern)


def _binding(ph: Placeholder) -> str:
    return source_expr(ph.source)


def _device_source(names: list[str], placeholders: list[Placeholder], params: list[str]) -> str:
    """A tensor input of forward if there is one (its device is the caller's), else any tensor input."""
    tensors = [(n, p) for n, p in zip(names, placeholders, strict=True) if p.kind == "tensor"]
    if not tensors:
        raise PackagingError("the compiled graph has no tensor input to take the device from")
    for name, ph in tensors:
        if source_expr(ph.source).split(".")[0].split("[")[0] in params:
            return name
    return tensors[0][0]


class _CallRewriter(ast.NodeTransformer):
    def __init__(self, kernels: dict[str, KernelDef], configs: dict[str, LaunchConfig], scalars: set[str],
                 placeholders: dict[str, Placeholder], lowering: Lowering) -> None:
        self.kernels = kernels
        self.configs = configs
        self.scalars = scalars
        self.placeholders = placeholders
        self.lowering = lowering
        self.extern: set[str] = set()
        self.helpers: set[str] = set()
        self._grid_counter = 0

    def statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            out += self._statement(stmt)
        return out

    def _statement(self, stmt: ast.stmt) -> list[ast.stmt]:
        if isinstance(stmt, ast.With):  # `with torch.cuda._DeviceGuard(0):` - the caller's device is used
            return self.statements(stmt.body)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id == "args":
            return []
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and \
                _callee(stmt.value).endswith("get_raw_stream"):
            return []
        if isinstance(stmt, ast.Return):
            return [self._return(stmt)]
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            callee = _callee(call)
            if callee in ("args.clear",) or callee.split(".")[-1] in DROPPED_CALLS:
                return []
            if callee == "assert_size_stride":
                return self._shape_check(call)
            if isinstance(call.func, ast.Attribute) and call.func.attr == "run" and \
                    isinstance(call.func.value, ast.Name) and call.func.value.id in self.kernels:
                return self._launch(call)
        return [ast.fix_missing_locations(self.visit(stmt))]

    # -------------------------------------------------------------- expressions

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node = self.generic_visit(node)
        callee = _callee(node)
        if callee in EMPTY:
            size, stride, dtype = (node.args + [None, None, None])[:3]
            return _parse(f"torch.empty_strided({ast.unparse(size)}, {ast.unparse(stride)}, "
                          f"dtype={ast.unparse(dtype)}, device={EMPTY[callee]})")
        if callee == "reinterpret_tensor":
            base, size, stride, offset = (node.args + [ast.Constant(0)] * 4)[:4]
            b = ast.unparse(base)
            return _parse(f"torch.as_strided({b}, {ast.unparse(size)}, {ast.unparse(stride)}, "
                          f"{b}.storage_offset() + {ast.unparse(offset)})")
        if callee.endswith(".item") and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id in self.scalars:
            return node.func.value  # a Python number the graph received as a 0-d tensor
        if callee.startswith("extern_kernels."):
            name = f"torch.{callee.split('.', 1)[1]}"
            self.extern.add(name)
            node.func = _parse(name)
            return node
        if callee.startswith(("aten.", "torch.ops.")):
            name = "torch.ops." + callee if callee.startswith("aten.") else callee
            self.extern.add(name)
            node.func = _parse(name)
            return node
        if callee in ("empty_strided", "torch.empty_strided"):
            node.keywords = [k for k in node.keywords if k.arg != "device"] + \
                [ast.keyword(arg="device", value=ast.Name(id=DEVICE, ctx=ast.Load()))]
        return node

    # -------------------------------------------------------------- statements

    def _return(self, stmt: ast.Return) -> ast.stmt:
        value = self.visit(stmt.value) if stmt.value is not None else None
        elts = value.elts if isinstance(value, ast.Tuple) else None
        if elts is None:
            return ast.Return(value=value)
        if self.lowering.returns_tuple:
            keep = elts[: self.lowering.outputs]
            return ast.Return(value=ast.Tuple(elts=keep, ctx=ast.Load()))
        if not elts:
            raise PackagingError("the compiled graph returns nothing")
        return ast.Return(value=elts[0])

    def _shape_check(self, call: ast.Call) -> list[ast.stmt]:
        """Keep `assert_size_stride` only where it pins a size; symbolic sizes hold by construction."""
        tensor, size = call.args[0], call.args[1]
        if not (isinstance(size, ast.Tuple) and any(isinstance(e, ast.Constant) for e in size.elts)):
            return []
        name = ast.unparse(tensor)
        where = source_expr(self.placeholders[name].source) if name in self.placeholders else name
        message = (f"this kernel was lowered for {where} of shape {ast.unparse(size)} (TorchInductor "
                   f"specialized those sizes); got ")
        return [_parse_stmt(f"if tuple({name}.shape) != {ast.unparse(size)}:\n"
                            f"    raise ValueError({message!r} + str(tuple({name}.shape)))")]

    def _launch(self, call: ast.Call) -> list[ast.stmt]:
        """`k.run(*args, *grid?, stream=)` -> `k[grid](*args, BLOCK=..., num_warps=, num_stages=)`.

        Inductor's launcher takes every kernel parameter positionally except the block sizes its
        autotuner chose (those come from the recorded config); FixedGrid kernels take the grid last.
        """
        name = call.func.value.id
        kernel = self.kernels[name]
        config = self._config(kernel)
        tuned = {p: v for p, v in config.kwargs.items() if p in kernel.params}
        positional = [p for p in kernel.params if p not in tuned]
        args = [self.visit(a) for a in call.args]
        extra = kernel.extra_launcher_args
        if len(args) != len(positional) + len(extra):
            raise PackagingError(f"kernel {name}: launched with {len(args)} arguments, its launcher takes "
                                 f"{len(positional)} (+{len(extra)} grid)")
        kernel_args = args[: len(positional)]
        values = {**kernel.constants, **config.kwargs}
        pre, grid = self._grid(kernel, dict(zip(positional, kernel_args, strict=True)), args[len(positional):],
                               values)
        keywords = [f"{p}={v!r}" for p, v in tuned.items()]
        keywords += [f"num_warps={config.num_warps}", f"num_stages={config.num_stages}"]
        text = f"{name}[{grid}]({', '.join([ast.unparse(a) for a in kernel_args] + keywords)})"
        return pre + [_parse_stmt(text)]

    def _config(self, kernel: KernelDef) -> LaunchConfig:
        config = self.configs.get(kernel.name)
        if config is not None:
            return config
        if kernel.num_warps is not None:  # templates carry their launch options in the decorator
            return LaunchConfig(num_warps=kernel.num_warps, num_stages=kernel.num_stages or 1)
        raise PackagingError(f"kernel {kernel.name}: no launch config was recorded (the autotuner's choice is "
                             "part of the lowering record)")

    def _grid(self, kernel: KernelDef, by_param: dict[str, ast.expr], extra: list[ast.expr],
              values: dict[str, Any]) -> tuple[list[ast.stmt], str]:
        if kernel.grid_type == "FixedGrid" or (extra and kernel.grid_type is None):
            return [], "(" + ", ".join(ast.unparse(e) for e in extra) + ",)"

        def size(param: str) -> str:
            if param in by_param:
                return ast.unparse(by_param[param])
            if param in values:
                return repr(values[param])
            raise PackagingError(f"kernel {kernel.name}: grid needs {param}, which it neither takes nor fixes")

        def cdiv(param: str, block: str | None) -> str:
            b = values.get(block) if block else None
            n = size(param)
            if not b or b == 1:
                return n
            return str(-(-int(n) // b)) if n.lstrip("-").isdigit() else f"triton.cdiv({n}, {b})"

        if kernel.grid_type == "Grid2DWithYZOverflow":
            self._grid_counter += 1
            y = f"_ygrid{self._grid_counter}"
            pre = [_parse_stmt(f"{y} = {cdiv('ynumel', 'YBLOCK')}"),
                   _parse_stmt(f"{y}_split = triton.cdiv({y}, {MAX_Y_GRID})")]
            return pre, f"({cdiv('xnumel', 'XBLOCK')}, triton.cdiv({y}, max({y}_split, 1)), {y}_split)"
        rule = GRIDS.get(kernel.grid_type or "")
        if rule is None:
            raise PackagingError(f"kernel {kernel.name}: grid type {kernel.grid_type!r} is not supported")
        dims = [cdiv(p, b) for p, b in rule] + ["1"] * (3 - len(rule))
        return [], "(" + ", ".join(dims) + ")"


def _callee(call: ast.Call) -> str:
    parts = []
    node = call.func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _parse(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def _parse_stmt(text: str) -> ast.stmt:
    return ast.parse(text).body[0]


def _check_names(body: list[ast.stmt], known: set[str]) -> None:
    """Every name the body reads is bound in it, a forward argument, a kernel, or torch/math/triton."""
    bound = set(known) | GLOBAL_NAMES
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
            raise PackagingError(f"the wrapper's call() uses `{node.id}`, which the packager cannot provide",
                                 hint="extend xe_forge/proposers/lower/forward.py for this construct")
