"""Elementwise ops as Triton expressions on fp32 tiles, and the small @triton.jit helpers they call.

Formulas follow PyTorch's definitions (torch.nn.functional docs): GELU exact uses erf, softplus
switches to the identity above `threshold`, tanh is written with tl.sigmoid (no tl.tanh on every
toolchain, and the interpreter has no libdevice). Every helper is plain tl code, so it runs under
the interpreter and on any backend.
"""

from __future__ import annotations

HELPERS = {
    "tanh": '''@triton.jit
def _tanh(x):
    # tanh(x) = 2 * sigmoid(2x) - 1
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0
''',
    "softplus": '''@triton.jit
def _softplus(x, beta, threshold):
    # log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold (as torch does)
    bx = x * beta
    return tl.where(bx > threshold, x, tl.log(1.0 + tl.exp(tl.minimum(bx, threshold))) / beta)
''',
    "gelu": '''@triton.jit
def _gelu(x):
    # exact GELU: x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2)))
    return 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
''',
    "gelu_tanh": '''@triton.jit
def _gelu_tanh(x):
    # tanh approximation: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (2.0 * tl.sigmoid(2.0 * inner))
''',
}
DEPENDS = {"mish": ["tanh", "softplus"]}


class ExprError(Exception):
    """An op with arguments the emitter cannot express."""


def _clamp(x: str, lo: str | None, hi: str | None) -> str:
    if lo is not None:
        x = f"tl.maximum({x}, {lo})"
    if hi is not None:
        x = f"tl.minimum({x}, {hi})"
    return x


_POW = {0.5: "tl.sqrt({x})", 1.0: "{x}", 2.0: "({x} * {x})", 3.0: "({x} * {x} * {x})", -0.5: "tl.rsqrt({x})",
        -1.0: "(1.0 / {x})", -2.0: "(1.0 / ({x} * {x}))"}


def elementwise(op: str, args: list[str], scalars: dict[str, str], attrs: dict[str, object],
                needs: set[str]) -> str:
    """The expression for `op` over already-broadcast operand expressions; `needs` collects helpers."""
    x = args[0] if args else ""
    s = scalars
    binary = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
    if op in binary:
        return f"({args[0]} {binary[op]} {args[1]})"
    simple = {
        "maximum": f"tl.maximum({x}, {args[1] if len(args) > 1 else ''})",
        "minimum": f"tl.minimum({x}, {args[1] if len(args) > 1 else ''})",
        "neg": f"(-{x})", "relu": f"tl.maximum({x}, 0.0)", "sigmoid": f"tl.sigmoid({x})", "exp": f"tl.exp({x})",
        "log": f"tl.log({x})", "abs": f"tl.abs({x})", "sqrt": f"tl.sqrt({x})", "rsqrt": f"tl.rsqrt({x})",
        "erf": f"tl.math.erf({x})", "silu": f"({x} * tl.sigmoid({x}))", "square": f"({x} * {x})",
        "reciprocal": f"(1.0 / {x})", "relu6": f"tl.minimum(tl.maximum({x}, 0.0), 6.0)",
        "hardsigmoid": f"tl.minimum(tl.maximum({x} / 6.0 + 0.5, 0.0), 1.0)",
        "hardswish": f"({x} * tl.minimum(tl.maximum({x} + 3.0, 0.0), 6.0) / 6.0)",
        "softsign": f"({x} / (1.0 + tl.abs({x})))",
    }
    if op in simple:
        return simple[op]
    if op == "leaky_relu":
        return f"tl.where({x} >= 0, {x}, {x} * {s.get('negative_slope', '0.01')})"
    if op == "hardtanh":
        return _clamp(x, s.get("min"), s.get("max"))
    if op == "elu":
        return f"tl.where({x} > 0, {x}, {s.get('alpha', '1.0')} * (tl.exp({x}) - 1.0))"
    if op == "selu":
        return f"(1.0507009873554805 * tl.where({x} > 0, {x}, 1.6732632423543772 * (tl.exp({x}) - 1.0)))"
    if op == "pow":
        return _POW[float(s["exponent"])].format(x=x)
    if op == "fill":
        return f"({x} * 0.0 + {s['value']})"
    if op in ("tanh", "gelu", "softplus", "mish", "logsigmoid"):
        return _helper_call(op, x, s, attrs, needs)
    raise ExprError(f"no Triton expression for `{op}`")


def _helper_call(op: str, x: str, s: dict[str, str], attrs: dict[str, object], needs: set[str]) -> str:
    if op == "tanh":
        needs.add("tanh")
        return f"_tanh({x})"
    if op == "gelu":
        tanh = attrs.get("approximate") == "tanh"
        needs.add("gelu_tanh" if tanh else "gelu")
        return f"_gelu_tanh({x})" if tanh else f"_gelu({x})"
    if op == "softplus":
        needs.add("softplus")
        return f"_softplus({x}, {s.get('beta', '1.0')}, {s.get('threshold', '20.0')})"
    if op == "logsigmoid":
        needs.add("softplus")
        return f"(-_softplus(-{x}, 1.0, 20.0))"
    needs.update(DEPENDS["mish"])
    return f"({x} * _tanh(_softplus({x}, 1.0, 20.0)))"


def helper_source(needs: set[str]) -> str:
    """The helper functions the kernels call, in a stable order."""
    return "\n\n".join(HELPERS[name] for name in HELPERS if name in needs)
