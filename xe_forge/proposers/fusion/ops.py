"""How torch spells the ops the fusion generator understands: fx targets mapped to the graph's op names.

torch.fx records `torch.relu`, `F.relu`, `x.relu()`, `operator.add` and `nn.ReLU` modules as different
targets; these tables fold them into one op name with its attributes, so the converter (convert.py)
handles each op once. Anything not listed is an unsupported construct, named in the refusal.
"""

from __future__ import annotations

import operator
from typing import Any

# function / method name -> (op, {kwarg: attr name}, {attr: default})
ELEMENTWISE: dict[str, tuple[str, dict[str, str], dict[str, Any]]] = {
    "relu": ("relu", {}, {}), "relu_": ("relu", {}, {}),
    "sigmoid": ("sigmoid", {}, {}), "sigmoid_": ("sigmoid", {}, {}),
    "tanh": ("tanh", {}, {}), "tanh_": ("tanh", {}, {}),
    "exp": ("exp", {}, {}), "log": ("log", {}, {}), "abs": ("abs", {}, {}), "sqrt": ("sqrt", {}, {}),
    "rsqrt": ("rsqrt", {}, {}), "erf": ("erf", {}, {}), "neg": ("neg", {}, {}), "negative": ("neg", {}, {}),
    "square": ("square", {}, {}), "reciprocal": ("reciprocal", {}, {}),
    "gelu": ("gelu", {"approximate": "approximate"}, {"approximate": "none"}),
    "silu": ("silu", {}, {}), "mish": ("mish", {}, {}),
    "softplus": ("softplus", {"beta": "beta", "threshold": "threshold"}, {"beta": 1.0, "threshold": 20.0}),
    "leaky_relu": ("leaky_relu", {"negative_slope": "negative_slope"}, {"negative_slope": 0.01}),
    "hardtanh": ("hardtanh", {"min_val": "min", "max_val": "max"}, {"min": -1.0, "max": 1.0}),
    "hardsigmoid": ("hardsigmoid", {}, {}), "hardswish": ("hardswish", {}, {}),
    "elu": ("elu", {"alpha": "alpha"}, {"alpha": 1.0}), "selu": ("selu", {}, {}),
    "relu6": ("relu6", {}, {}), "logsigmoid": ("logsigmoid", {}, {}), "softsign": ("softsign", {}, {}),
    "clamp": ("hardtanh", {"min": "min", "max": "max"}, {"min": None, "max": None}),
    "clip": ("hardtanh", {"min": "min", "max": "max"}, {"min": None, "max": None}),
    "clamp_min": ("hardtanh", {"min": "min"}, {"min": None, "max": None}),
    "clamp_max": ("hardtanh", {"max": "max"}, {"min": None, "max": None}),
}
"""Positional arguments after the tensor fill the listed kwargs in order (`F.leaky_relu(x, 0.2)`)."""

BINARY_FUNCTIONS: dict[Any, str] = {
    operator.add: "add", operator.iadd: "add", operator.sub: "sub", operator.isub: "sub",
    operator.mul: "mul", operator.imul: "mul", operator.truediv: "div", operator.itruediv: "div",
}
BINARY_NAMES = {"add": "add", "add_": "add", "sub": "sub", "sub_": "sub", "subtract": "sub", "mul": "mul",
                "mul_": "mul", "multiply": "mul", "div": "div", "div_": "div", "divide": "div", "true_divide": "div",
                "maximum": "maximum", "minimum": "minimum", "fmax": "maximum", "fmin": "minimum", "rsub": "rsub"}

REDUCTIONS = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min", "max": "max", "min": "min",
              "logsumexp": "logsumexp", "var": "var", "std": "std"}
"""max/min with a dim reduce; with a tensor second argument they are elementwise (BINARY)."""

ALIASES = {"clone", "detach", "contiguous", "float", "to", "type_as", "detach_"}
"""Methods that leave the values as they are (the kernel computes in fp32 anyway)."""
RESHAPES = {"unsqueeze", "squeeze", "view", "reshape", "flatten"}

# nn module class name -> (op, {module attribute: attr name})
MODULES: dict[str, tuple[str, dict[str, str]]] = {
    "ReLU": ("relu", {}), "Sigmoid": ("sigmoid", {}), "Tanh": ("tanh", {}), "SiLU": ("silu", {}),
    "Mish": ("mish", {}), "GELU": ("gelu", {"approximate": "approximate"}),
    "LeakyReLU": ("leaky_relu", {"negative_slope": "negative_slope"}),
    "Softplus": ("softplus", {"beta": "beta", "threshold": "threshold"}),
    "Hardtanh": ("hardtanh", {"min_val": "min", "max_val": "max"}), "ReLU6": ("relu6", {}),
    "Hardsigmoid": ("hardsigmoid", {}), "Hardswish": ("hardswish", {}), "ELU": ("elu", {"alpha": "alpha"}),
    "SELU": ("selu", {}), "LogSigmoid": ("logsigmoid", {}), "Softsign": ("softsign", {}),
    "Softmax": ("softmax", {"dim": "dim"}), "LogSoftmax": ("log_softmax", {"dim": "dim"}),
    "Identity": ("alias", {}),
}
NUMERIC_ATTRS = {"negative_slope", "beta", "threshold", "min", "max", "alpha"}
"""Module attributes that are numbers the host reads at run time (a different init stays correct)."""


def call_name(target: Any) -> str:
    """`torch.relu` / `F.relu` / 'relu' (a method) -> 'relu'."""
    if isinstance(target, str):
        return target
    return getattr(target, "__name__", str(target))
