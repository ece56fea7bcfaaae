"""Static analysis of a kernel: the issues each stage serves, found without an LLM.

The rules engine plans from these alone; in LLM mode they are given to the analyzer as facts, and
its own findings are added to them.
"""

from __future__ import annotations

import ast
import re

from xe_forge.proposers.base import Issue
from xe_forge.stages import stage_for_issue
from xe_forge.verify.static import check_source


def _line_of(source: str, pattern: str) -> tuple[int | None, str]:
    for i, line in enumerate(source.splitlines(), 1):
        if re.search(pattern, line):
            return i, line.strip()[:120]
    return None, ""


def _found(kind: str, line: int | None, description: str, evidence: str = "") -> Issue:
    """An issue, served by the stage whose YAML lists its kind."""
    return Issue(kind=kind, stage=stage_for_issue(kind), line=line, evidence=evidence, description=description)


def _issue(source: str, pattern: str, kind: str, description: str) -> Issue | None:
    line, evidence = _line_of(source, pattern)
    return None if line is None else _found(kind, line, description, evidence)


def analyze_source(source: str) -> list[Issue]:
    """Every issue the rules can see, each tied to the stage that serves it."""
    checks = [
        (r"float64", "float64-math", "float64 arithmetic: slow on GPUs and rarely needed", None),
        (r"tl\.exp\(", "expensive-transcendental", "tl.exp where exp2 with a folded log2(e) is cheaper", None),
        (r"make_block_ptr", "deprecated-block-pointers",
         "block pointers are removed in triton 3.9: use tensor descriptors", None),
        (r"\.t\(\)\.contiguous\(\)|\.transpose\([^)]*\)\.contiguous\(\)", "per-call-transpose",
         "a weight is transposed and copied on every call", None),
    ]
    issues = []
    for pattern, kind, text, requires in checks:
        if requires and requires not in source:
            continue
        found = _issue(source, pattern, kind, text)
        if found:
            issues.append(found)
    issues += _structural(source)
    upcast = _dot_operand_upcast(ast.parse(source))
    if upcast is not None:
        issues.insert(0, _found("dot-operand-upcast", upcast, "operands are cast to fp32 before tl.dot: the matrix "
                                "engine runs 16-bit operands natively", source.splitlines()[upcast - 1].strip()[:120]))
    return issues


def _is_fp32_cast(node: ast.AST) -> bool:
    """`x.to(tl.float32)` or `x.to(dtype=tl.float32)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"):
        return False
    given = node.args[:1] + [k.value for k in node.keywords if k.arg == "dtype"]
    return any(isinstance(a, ast.Attribute) and a.attr == "float32" for a in given)


def _casts_in(expr: ast.AST) -> list[int]:
    return [n.func.end_lineno or n.lineno for n in ast.walk(expr) if _is_fp32_cast(n)]  # the `.to(` line


def _dot_operand_upcast(tree: ast.Module) -> int | None:
    """The line of the first fp32 cast that feeds a tl.dot operand, directly or through a local name;
    casts elsewhere (a bias, an epilogue) are not this issue."""
    lines = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        assigned: dict[str, list[ast.AST]] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "dot"):
                continue
            for operand in call.args[:2]:
                lines += _casts_in(operand)
                if isinstance(operand, ast.Name):
                    for value in assigned.get(operand.id, []):
                        lines += _casts_in(value)
    return min(lines) if lines else None


def _structural(source: str) -> list[Issue]:
    out: list[Issue] = []
    static = check_source(source, record_only=True)
    launches = _launch_sites(source, static.kernels)
    if len(launches) > 1:
        out.append(_found("unfused-epilogue", launches[1],
                          f"forward launches {len(launches)} kernels: intermediates round-trip memory"))
    conv = _torch_conv(source, static.torch_ops)
    if conv:
        out.append(_found("library-conv", _line_of(source, re.escape(conv) + r"\(")[0],
                          f"forward runs the convolution in torch ({conv}): a library call whose output "
                          "round-trips memory before the Triton epilogue"))
    if static.kernels and "triton.autotune" not in source and "@autotune" not in source:
        out.append(_found("no-autotune", _line_of(source, r"@triton\.jit")[0],
                          "no @triton.autotune: one fixed configuration for every shape"))
    tiles = re.search(TILE_LITERAL, source)
    if tiles:
        line, ev = _line_of(source, re.escape(tiles.group(0)))
        out.append(_found("small-tiles", line, "fixed tile sizes and default launch options, not chosen for the "
                          "target", ev))
    if "tl.dot(" in source:
        if "GROUP_SIZE_M" not in source and re.search(r"program_id\(1\)", source):
            out.append(_found("no-tile-swizzle", _line_of(source, r"program_id\(1\)")[0],
                              "2D tile grid in row-major launch order: no GROUP_SIZE_M swizzle for L2 reuse"))
        if "make_tensor_descriptor" not in source and "TensorDescriptor" not in source:
            out.append(_found("pointer-tensor-loads", _line_of(source, r"tl\.load\(")[0],
                              "dot operands loaded through tensors of pointers, not 2D block I/O"))
    return out


TILE_LITERAL = re.compile(r"\b(BLOCK_[A-Z_]*|BLOCK_SIZE|[XYZR]0?_?BLOCK)\s*(?::\s*tl\.constexpr\s*)?=\s*\d+")
"""A tile fixed to a literal: `BLOCK_M = 64`, `BLOCK_SIZE=1024` at a launch, and TorchInductor's spellings
(`XBLOCK=512` at a launch, `BLOCK_M: tl.constexpr = 128` in a template's body)."""


def _torch_conv(source: str, torch_ops: set[str]) -> str | None:
    """The first convolution forward leaves to torch: F.conv2d/conv3d, or a self.<m> that is an nn.ConvNd."""
    for op in sorted(torch_ops):
        if op.split(".")[-1] in ("conv2d", "conv3d"):
            return op
        module = op.removeprefix("self.")
        if module != op and re.search(rf"\bself\.{re.escape(module)}\s*=\s*(nn|torch\.nn)\.Conv[23]d\(", source):
            return op
    return None


def _launch_sites(source: str, kernels: set[str]) -> list[int]:
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            value = node.func.value
            if isinstance(value, ast.Name) and value.id in kernels:
                lines.append(node.lineno)
    return sorted(lines)


def stages_with_issues(issues: list[Issue]) -> list[str]:
    return list(dict.fromkeys(i.stage for i in issues))
