"""How torch spells what the general path computes: function, method and module names -> its ops.

Names fold the spellings (`torch.relu`, `F.relu`, `x.relu()`, `x.relu_()`, `nn.ReLU`) into one
pointwise op with its hyperparameters in the order they come positionally, or into a runtime
launcher with torch's own argument names and defaults. Anything not listed is refused by name.
"""

from __future__ import annotations

from typing import Any

# name -> (pointwise op, positional parameters after the input, defaults). 'inplace' is F's flag.
UNARY: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    "relu": ("relu", ["inplace"], {}), "sigmoid": ("sigmoid", [], {}), "tanh": ("tanh", [], {}),
    "exp": ("exp", [], {}), "log": ("log", [], {}), "abs": ("abs", [], {}), "sqrt": ("sqrt", [], {}),
    "rsqrt": ("rsqrt", [], {}), "erf": ("erf", [], {}), "neg": ("neg", [], {}), "negative": ("neg", [], {}),
    "square": ("square", [], {}), "reciprocal": ("reciprocal", [], {}), "sign": ("sign", [], {}),
    "floor": ("floor", [], {}), "ceil": ("ceil", [], {}), "trunc": ("trunc", [], {}), "round": ("round", [], {}),
    "sin": ("sin", [], {}), "cos": ("cos", [], {}), "exp2": ("exp2", [], {}), "log2": ("log2", [], {}),
    "log1p": ("log1p", [], {}), "expm1": ("expm1", [], {}), "silu": ("silu", ["inplace"], {}),
    "mish": ("mish", ["inplace"], {}), "selu": ("selu", ["inplace"], {}), "relu6": ("relu6", ["inplace"], {}),
    "hardsigmoid": ("hardsigmoid", ["inplace"], {}), "hardswish": ("hardswish", ["inplace"], {}),
    "logsigmoid": ("logsigmoid", [], {}), "softsign": ("softsign", [], {}),
    "gelu": ("gelu", ["approximate"], {"approximate": "none"}),
    "softplus": ("softplus", ["beta", "threshold"], {"beta": 1.0, "threshold": 20.0}),
    "leaky_relu": ("leaky_relu", ["negative_slope", "inplace"], {"negative_slope": 0.01}),
    "hardtanh": ("hardtanh", ["min_val", "max_val", "inplace"], {"min_val": -1.0, "max_val": 1.0}),
    "elu": ("elu", ["alpha", "inplace"], {"alpha": 1.0}), "celu": ("celu", ["alpha", "inplace"], {"alpha": 1.0}),
    "clamp": ("clamp", ["min", "max"], {"min": None, "max": None}),
    "clip": ("clamp", ["min", "max"], {"min": None, "max": None}),
    "clamp_min": ("clamp", ["min"], {"min": None, "max": None}),
    "clamp_max": ("clamp", ["max"], {"min": None, "max": None}),
    "threshold": ("threshold", ["threshold", "value", "inplace"], {}),
}
# pointwise parameter name -> the name the expression writer (fusion/expr.py) reads
PARAM_NAMES = {"min_val": "min", "max_val": "max"}
STATIC_PARAMS = {"approximate"}

BINARY = {"add": "add", "sub": "sub", "subtract": "sub", "mul": "mul", "multiply": "mul", "div": "div",
          "divide": "div", "true_divide": "div", "truediv": "div", "floordiv": "floordiv",
          "floor_divide": "floordiv", "mod": "remainder", "remainder": "remainder", "pow": "pow",
          "maximum": "maximum", "minimum": "minimum", "fmax": "maximum", "fmin": "minimum", "rsub": "rsub",
          "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "less": "lt", "greater": "gt",
          "logical_and": "logical_and", "logical_or": "logical_or", "and_": "logical_and", "or_": "logical_or",
          "iadd": "add", "isub": "sub", "imul": "mul", "itruediv": "div"}
INPLACE_OPERATORS = {"iadd", "isub", "imul", "itruediv"}

REDUCTIONS = {"sum": "sum", "mean": "mean", "amax": "amax", "amin": "amin", "max": "amax", "min": "amin",
              "logsumexp": "logsumexp", "var": "var", "std": "std", "prod": "prod"}

# name -> (runtime launcher, torch's parameter names after the input, defaults)
CALLS: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    "linear": ("xfg_linear", ["weight", "bias"], {"bias": None}),
    "matmul": ("xfg_matmul", ["other"], {}), "mm": ("xfg_matmul", ["mat2"], {}),
    "bmm": ("xfg_matmul", ["mat2"], {}),
    "addmm": ("xfg_addmm", ["mat1", "mat2", "beta", "alpha"], {"beta": 1.0, "alpha": 1.0}),
    "baddbmm": ("xfg_addmm", ["batch1", "batch2", "beta", "alpha"], {"beta": 1.0, "alpha": 1.0}),
    **{f"conv{n}d": ("xfg_conv", ["weight", "bias", "stride", "padding", "dilation", "groups"],
                     {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1}) for n in (1, 2, 3)},
    **{f"conv_transpose{n}d": ("xfg_conv_transpose", ["weight", "bias", "stride", "padding", "output_padding",
                                                       "groups", "dilation"],
                               {"bias": None, "stride": 1, "padding": 0, "output_padding": 0, "groups": 1,
                                "dilation": 1}) for n in (1, 2, 3)},
    "batch_norm": ("xfg_batch_norm", ["running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"],
                   {"weight": None, "bias": None, "training": False, "momentum": 0.1, "eps": 1e-5}),
    "group_norm": ("xfg_group_norm", ["num_groups", "weight", "bias", "eps"],
                   {"weight": None, "bias": None, "eps": 1e-5}),
    "layer_norm": ("xfg_layer_norm", ["normalized_shape", "weight", "bias", "eps"],
                   {"weight": None, "bias": None, "eps": 1e-5}),
    "instance_norm": ("xfg_instance_norm", ["running_mean", "running_var", "weight", "bias", "use_input_stats",
                                            "momentum", "eps"],
                      {"running_mean": None, "running_var": None, "weight": None, "bias": None,
                       "use_input_stats": True, "momentum": 0.1, "eps": 1e-5}),
    **{f"max_pool{n}d": ("xfg_max_pool", ["kernel_size", "stride", "padding", "dilation", "ceil_mode",
                                          "return_indices"],
                         {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False})
       for n in (1, 2, 3)},
    "avg_pool1d": ("xfg_avg_pool", ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"],
                   {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True}),
    **{f"avg_pool{n}d": ("xfg_avg_pool", ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                          "divisor_override"],
                         {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True,
                          "divisor_override": None}) for n in (2, 3)},
    **{f"adaptive_avg_pool{n}d": ("xfg_adaptive_pool", ["output_size"], {}) for n in (1, 2, 3)},
    **{f"adaptive_max_pool{n}d": ("xfg_adaptive_pool", ["output_size", "return_indices"],
                                  {"return_indices": False}) for n in (1, 2, 3)},
    "dropout": ("xfg_dropout", ["p", "training", "inplace"], {"p": 0.5, "training": True, "inplace": False}),
    "softmax": ("xfg_softmax", ["dim", "_stacklevel", "dtype"], {"dim": None, "dtype": None}),
    "log_softmax": ("xfg_softmax", ["dim", "_stacklevel", "dtype"], {"dim": None, "dtype": None}),
}
# torch.dropout(input, p, train) spells training differently
CALL_ALIASES = {"train": "training"}

# data movement, views and metadata: written as they are (the verifier counts none of it as compute)
METHODS = {"view", "reshape", "permute", "transpose", "t", "flatten", "unflatten", "unsqueeze", "squeeze", "expand",
           "expand_as", "contiguous", "clone", "detach", "to", "float", "half", "double", "bfloat16", "type_as",
           "repeat", "narrow", "select", "chunk", "split", "view_as", "reshape_as", "flip", "size", "dim", "numel",
           "new_zeros", "new_ones", "new_full", "new_empty", "movedim", "unbind", "type", "element_size"}
FUNCTIONS = {"flatten", "reshape", "squeeze", "unsqueeze", "transpose", "permute", "cat", "concat", "concatenate",
             "stack", "narrow", "chunk", "split", "zeros_like", "ones_like", "full_like", "empty_like", "zeros",
             "ones", "full", "empty", "arange", "movedim", "unbind", "broadcast_to"}
ALIASES = {"detach_", "requires_grad_"}
ATTRIBUTES = {"shape", "dtype", "device", "T", "mT", "ndim", "data", "is_cuda"}

# nn module class -> (launcher, [(argument, module attribute or expression template)])
MODULE_CALLS: dict[str, tuple[str, list[str]]] = {
    "Linear": ("xfg_linear", ["weight", "bias"]),
    **{f"Conv{n}d": ("xfg_conv", ["weight", "bias", "stride", "padding", "dilation", "groups"]) for n in (1, 2, 3)},
    **{f"ConvTranspose{n}d": ("xfg_conv_transpose", ["weight", "bias", "stride", "padding", "output_padding",
                                                     "groups", "dilation"]) for n in (1, 2, 3)},
    **{f"BatchNorm{n}d": ("xfg_batch_norm", ["running_mean", "running_var", "weight", "bias", "training", "momentum",
                                             "eps", "track_running_stats", "num_batches_tracked"]) for n in (1, 2, 3)},
    "GroupNorm": ("xfg_group_norm", ["num_groups", "weight", "bias", "eps"]),
    "LayerNorm": ("xfg_layer_norm", ["normalized_shape", "weight", "bias", "eps"]),
    **{f"InstanceNorm{n}d": ("xfg_instance_norm", ["running_mean", "running_var", "weight", "bias",
                                                   "{m}.training or not {m}.track_running_stats", "momentum", "eps"])
       for n in (1, 2, 3)},
    **{f"MaxPool{n}d": ("xfg_max_pool", [str(n), "kernel_size", "stride", "padding", "dilation", "ceil_mode"])
       for n in (1, 2, 3)},
    "AvgPool1d": ("xfg_avg_pool", ["1", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]),
    **{f"AvgPool{n}d": ("xfg_avg_pool", [str(n), "kernel_size", "stride", "padding", "ceil_mode",
                                         "count_include_pad", "divisor_override"]) for n in (2, 3)},
    **{f"AdaptiveAvgPool{n}d": ("xfg_adaptive_pool", [str(n), "output_size"]) for n in (1, 2, 3)},
    **{f"AdaptiveMaxPool{n}d": ("xfg_adaptive_pool", [str(n), "output_size", "True"]) for n in (1, 2, 3)},
    "Dropout": ("xfg_dropout", ["p", "training"]),
    "Softmax": ("xfg_softmax", ["dim"]),
    "LogSoftmax": ("xfg_softmax", ["dim", "True"]),
}
NEEDS_FALSE = {"return_indices": "returns indices", "padding_mode": "pads other than with zeros"}
