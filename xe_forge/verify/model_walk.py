"""The candidate's model as data: its state read and written without calling any of its methods.

Outside forward the harness loads each trial's weights into the candidate and fingerprints its state
after the call. Those are not audited, so none of it may run candidate code: not a child module's
`state_dict` override, not a Parameter subclass's `copy_` or `detach`, not a `__getattr__`. So:
- `refusal(model, entry)` checks the built model once, by the real class objects (not by how the
  file spells its bases): the root is the class the static check read (`Model` defined in the file,
  not a name rebound to something else); every module class the file defines overrides none of
  nn.Module's API nor the attribute dunders; every parameter and buffer is exactly `torch.Tensor` or
  `nn.Parameter` (no subclass, whose methods would be the candidate's);
- `named_state(model)` is `state_dict(keep_vars=True)` rebuilt from the modules' own dicts (the
  order and names nn.Module gives, non-persistent buffers left out), with no method of the model
  called;
- `load_state(...)` copies through `torch.Tensor.copy_` itself.
"""

from __future__ import annotations

from typing import Any

from xe_forge.problem.source import MODEL_CLASSES
from xe_forge.verify.subset_rules import NN_MODULE_NAMES, NN_MODULE_OVERRIDABLE

# dunders that nn.Module or Python call around attribute access, copying and pickling: never the candidate's
HARNESS_DUNDERS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__dir__",
                             "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__", "__copy__",
                             "__deepcopy__", "__init_subclass__", "__class_getitem__", "__call__", "__del__",
                             "__instancecheck__", "__subclasscheck__", "__set_name__"})
_STATE_DICTS = ("_parameters", "_buffers", "_modules")


def _torch_class(cls: type) -> bool:
    return str(getattr(cls, "__module__", "")).split(".")[0] == "torch" or cls is object


def _own_dict(module: Any) -> dict[str, Any]:
    return object.__getattribute__(module, "__dict__")


def _modules(model: Any, prefix: str = "", memo: set[int] | None = None) -> list[tuple[str, Any]]:
    """(prefix, module) for the whole tree, as named_modules gives them, from the modules' own dicts."""
    memo = set() if memo is None else memo
    if id(model) in memo:
        return []
    memo.add(id(model))
    out = [(prefix, model)]
    for name, child in _own_dict(model)["_modules"].items():
        if child is not None:
            out += _modules(child, f"{prefix}{name}.", memo)
    return out


def entry_refusal(entry: Any, module: Any) -> str | None:
    """Why the object the file's entry name holds is not the class the static check read, or None: it must
    be a class defined at the file's top level under that very name (not a builder, not another class bound
    to the name)."""
    import torch

    if not isinstance(entry, type) or not issubclass(entry, torch.nn.Module):
        return (f"the file's model name is bound to a {type(entry).__name__}, not an nn.Module class: the class the "
                "static check reads must be the one that runs")
    names = [n for n in MODEL_CLASSES if n in vars(module)]
    if getattr(entry, "__module__", None) != module.__name__ or entry.__qualname__ != (names[0] if names else None):
        return (f"the file's model name is bound to the class {entry.__qualname__}, not the class defined under "
                "that name: the class the static check reads must be the one that runs")
    return None


def refusal(model: Any, entry: type | None = None) -> str | None:
    """Why the harness may not handle this model without running its code, or None."""
    import torch

    if entry is not None and type(model) is not entry:
        return (f"the model built is a {type(model).__qualname__}, not the file's class {entry.__qualname__}: the "
                "class the static check reads must be the one that runs")
    if not isinstance(model, torch.nn.Module):
        return f"the model is a {type(model).__qualname__}, not an nn.Module"
    for prefix, module in _modules(model):
        where = prefix[:-1] or "the model"
        if type(type(module)) is not type:
            return f"{where}: its class has a metaclass ({type(type(module)).__name__})"
        d = _own_dict(module)
        if any(type(d.get(k)) is not dict for k in _STATE_DICTS):
            return f"{where}: nn.Module's own dicts were replaced"
        for cls in type(module).__mro__:
            if _torch_class(cls):
                continue
            bad = sorted(n for n in vars(cls) if (n in NN_MODULE_NAMES and n not in NN_MODULE_OVERRIDABLE)
                         or n in HARNESS_DUNDERS)
            if bad:
                return (f"{where}: class {cls.__qualname__} redefines `{bad[0]}`, which nn.Module and the harness "
                        "rely on")
        for kind in ("_parameters", "_buffers"):
            for name, t in d[kind].items():
                if t is not None and type(t) not in (torch.Tensor, torch.nn.Parameter):
                    return (f"`{prefix}{name}` is a {type(t).__qualname__}: parameters and buffers are plain "
                            "torch.Tensor / nn.Parameter (a subclass's methods would run when the harness loads or "
                            "reads the weights)")
    return None


def parameters(model: Any) -> list[Any]:
    """Every parameter of the tree, from nn.Module's own dicts (no method called)."""
    return [t for _, module in _modules(model) for t in _own_dict(module)["_parameters"].values() if t is not None]


def freeze(model: Any, frozen: bool, built: dict[int, bool]) -> None:
    """`model.requires_grad_(False)` done by torch's own method, or, unfrozen, each parameter's flag as
    built (`built`: id -> requires_grad). A frozen layer (a fine-tuned model's backbone, LoRA, a model
    frozen for inference) computes what a trainable one does (red team 8, a43)."""
    import torch

    for t in parameters(model):
        want = False if frozen else built.get(id(t), t.requires_grad)
        if t.requires_grad != want and (t.is_floating_point() or t.is_complex() or not want):
            torch.Tensor.requires_grad_(t, want)


def set_training(model: Any, training: bool) -> None:
    """Every module's `training` flag, as `model.train(training)` leaves it, written into the modules' own
    dicts: no method of the file's classes runs (an overridden `train` would be candidate code outside a
    call). A user calls `model.eval()` for inference; a kernel that ignores the mode, or reads it to
    decide whether to compute, is wrong there (red team 8, a02 and a17)."""
    for _, module in _modules(model):
        _own_dict(module)["training"] = training


def named_state(model: Any) -> dict[str, Any]:
    """`model.state_dict(keep_vars=True)`'s tensors, read from nn.Module's own dicts (no method called)."""
    out: dict[str, Any] = {}
    for prefix, module in _modules(model):
        d = _own_dict(module)
        skip = d.get("_non_persistent_buffers_set", set())
        for name, t in d["_parameters"].items():
            if t is not None:
                out[prefix + name] = t
        for name, t in d["_buffers"].items():
            if t is not None and name not in skip:
                out[prefix + name] = t
    return out


def load_state(model: Any, state: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """Copy the shipped state into the candidate in place (its own dtype and device), by torch's own copy_."""
    import torch

    own = named_state(model)
    with torch.no_grad():
        for ref_name, cand_name in pairs:
            dst = own[cand_name]
            torch.Tensor.copy_(dst, state[ref_name].to(device=dst.device, dtype=dst.dtype))
