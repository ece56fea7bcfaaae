"""conv-implicit-gemm: a torch convolution in forward becomes the implicit-GEMM Triton kernel.

Seeds often keep the convolution in cuDNN (`self.conv(x)`, `F.conv2d(x, w, b, ...)`, declared in
allow_torch) and port only the epilogue. The recipe replaces each such call with `_xf_conv(...)`,
a launcher appended with its kernel (conv_template.py), taking the module's own weight, bias,
stride, padding, dilation and groups: the same function by construction, with the convolution in
Triton. It never guesses what a Triton kernel computes: a seed whose convolution is already a
Triton kernel is told so (the `lower` source of the fusion stage replaces such kernels wholesale).
"""

from __future__ import annotations

import ast

from xe_forge.proposers.rules.context import RecipeContext, register
from xe_forge.proposers.rules.conv_template import LAUNCHER, TEMPLATE
from xe_forge.proposers.rules.models import Applied, NotApplicable

CONV_CLASSES = {"Conv2d": 2, "Conv3d": 3}
FUNCTIONAL = {"torch.nn.functional.conv2d", "torch.nn.functional.conv3d", "torch.conv2d", "torch.conv3d",
              "F.conv2d", "F.conv3d"}
ARGS = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _conv_modules(model: ast.ClassDef) -> tuple[dict[str, int], dict[str, str]]:
    """`self.<name> = nn.Conv2d/3d(...)` in the class, and the ones the template cannot serve (why)."""
    found, refused = {}, {}
    for node in ast.walk(model):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        cls = _dotted(node.value.func).split(".")[-1]
        targets = [t.attr for t in node.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                   and t.value.id == "self"]
        if cls not in CONV_CLASSES or not targets:
            continue
        for kw in node.value.keywords:
            if kw.arg == "padding_mode" and not (isinstance(kw.value, ast.Constant) and kw.value.value == "zeros"):
                refused[targets[0]] = f"padding_mode={ast.unparse(kw.value)} (the template pads with zeros only)"
        found[targets[0]] = CONV_CLASSES[cls]
    return found, refused


def _replacement(call: ast.Call, modules: dict[str, int], refused: dict[str, str]) -> str | None:
    """The `_xf_conv(...)` text replacing one torch convolution call, None if the call is no convolution."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and func.attr in modules:
        if func.attr in refused:
            raise NotApplicable(f"self.{func.attr} uses {refused[func.attr]}")
        if len(call.args) != 1 or call.keywords:
            raise NotApplicable(f"self.{func.attr} is called with {len(call.args)} arguments (one input expected)")
        m = f"self.{func.attr}"
        return (f"{LAUNCHER}({ast.unparse(call.args[0])}, {m}.weight, {m}.bias, {m}.stride, {m}.padding, "
                f"{m}.dilation, {m}.groups)")
    if _dotted(func) in FUNCTIONAL:
        given = dict(zip(ARGS, call.args, strict=False))
        for kw in call.keywords:
            if kw.arg is None:
                raise NotApplicable(f"{_dotted(func)} is called with **kwargs: its arguments cannot be read")
            given[kw.arg] = kw.value
        if "input" not in given or "weight" not in given:
            raise NotApplicable(f"{_dotted(func)} is called without an input and a weight")
        return f"{LAUNCHER}(" + ", ".join(f"{a}={ast.unparse(v)}" if a != "input" else ast.unparse(v)
                                          for a, v in given.items()) + ")"
    return None


def _splice(source: str, edits: list[tuple[ast.AST, str]]) -> str:
    """Replace each node's exact source span (UTF-8 offsets, as ast reports them) with its text."""
    raw = source.encode()
    starts = [0]
    for line in raw.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = sorted(((starts[n.lineno - 1] + n.col_offset, starts[n.end_lineno - 1] + n.end_col_offset, text)
                    for n, text in edits), reverse=True)
    for start, end, text in spans:
        raw = raw[:start] + text.encode() + raw[end:]
    return raw.decode()


@register("conv-implicit-gemm")
def conv_implicit_gemm(ctx: RecipeContext) -> Applied:
    tree = ast.parse(ctx.source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    model = classes.get("ModelNew") or classes.get("Model")
    if model is None:
        raise NotApplicable("no Model/ModelNew class")
    if any(isinstance(n, ast.FunctionDef) and n.name == LAUNCHER for n in tree.body):
        raise NotApplicable(f"the file already defines {LAUNCHER} (applied before)")
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        raise NotApplicable("the model has no forward")
    modules, refused = _conv_modules(model)
    edits = []
    for node in ast.walk(forward):
        if isinstance(node, ast.Call):
            text = _replacement(node, modules, refused)
            if text is not None:
                edits.append((node, text))
    if not edits:
        where = f" (self.{', self.'.join(modules)} not called in forward)" if modules else ""
        raise NotApplicable("forward runs no torch convolution (nn.Conv2d/Conv3d module or F.conv2d/conv3d)"
                            + where + ": a convolution already in Triton is not rewritten by this recipe")
    code = _splice(ctx.source, edits).rstrip() + "\n" + TEMPLATE
    if "import triton.language as tl" not in code:
        code = "import triton\nimport triton.language as tl\n" + code
    names = ", ".join(sorted({ast.unparse(n.func) for n, _ in edits}))
    return Applied(code=code, rationale=f"{len(edits)} torch convolution call(s) ({names}) now run in the "
                                        "implicit-GEMM Triton kernel _xf_conv_igemm_kernel, bias fused")
