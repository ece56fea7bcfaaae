"""What torch did during a candidate's forward, seen at the dispatch level (inside the candidate's process).

Every aten operation is classified: views and metadata are free; allocation and data movement
(copies, casts, concatenation, padding) cost bytes but compute nothing; everything else is compute,
counted in FLOPs (torch's own FLOP formulas for GEMMs, convolutions and attention, one per element
otherwise). Compute is allowed only under a declared allowance: a named submodule of a torch.nn
class (`self.conv`), or a torch function by name (`F.conv2d`, `torch.mm`, `method:sum`), attributed
through a torch-function mode; disabling that mode only leaves the work unattributed, hence refused.
Device-to-host copies (`.item()`, `.cpu()`, data-dependent shapes) are recorded on GPUs. On CUDA the
profiler's list of GPU kernels shows work launched by no Triton launch and no audited torch op.

This runs where the candidate runs, so it is evidence only when it condemns; the static checks keep
the candidate from reaching it (no torch._C, no dispatch or profiler APIs, no introspection).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from xe_forge.verify.models import AuditSummary

FREE = frozenset({
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous", "is_same_size", "size", "stride",
    "dim", "numel", "_has_compatible_shallow_copy_type", "is_non_overlapping_and_dense", "result_type", "lift_fresh",
    "_unsafe_view", "record_stream", "resize_", "set_",
})
MOVEMENT = frozenset({
    "copy_", "_to_copy", "clone", "contiguous", "cat", "stack", "hstack", "vstack", "concat", "concatenate", "fill_",
    "zero_", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "empty", "empty_like", "empty_strided",
    "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full", "arange", "constant_pad_nd", "flip",
    "roll", "repeat", "lift_fresh_copy", "scalar_tensor", "_copy_from", "_copy_from_and_resize", "narrow_copy",
    "split_with_sizes_copy", "unbind_copy", "expand_copy", "permute_copy", "view_copy", "t_copy", "transpose_copy",
    "unsqueeze_copy", "squeeze_copy", "slice_copy", "select_copy", "as_strided_copy", "alias_copy", "detach_copy",
    "_pin_memory", "split", "split_with_sizes", "unbind", "chunk",
    # fresh random data: written without reading anything
    "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "normal_", "uniform_", "bernoulli_",
    "random_", "randperm",
})
SYNCING = frozenset({"_local_scalar_dense", "nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive",
                     "item", "equal", "is_nonzero"})
TRITON_LABEL = "xe_forge.triton:"
# torch functions that hand tensor data to host Python (numpy, lists): compute there escapes the audit
HOST_EXITS = frozenset({"numpy", "__array__", "from_numpy", "tolist"})


def normalise(allowed: list[str] | set[str]) -> tuple[set[str], set[str]]:
    """Allowance names -> (submodule paths, function/op leaves): 'self.conv' -> conv, 'F.conv2d' -> conv2d."""
    modules, leaves = set(), set()
    for item in allowed:
        item = item.strip()
        if not item:
            continue
        if item.startswith("self."):
            modules.add(item[len("self."):])
            continue
        item = item.split(":")[-1]
        parts = item.split(".")
        if "aten" in parts[:-1]:  # torch.ops.aten.<op>[.<overload>]: the op, whatever the overload
            leaf = parts[parts.index("aten") + 1]
        else:
            parts = [x for x in parts if x not in ("default", "Tensor", "Scalar", "int")]
            leaf = parts[-1] if parts else item
        leaf = leaf.strip("_")
        leaves.add("matmul" if leaf == "@" else leaf)
    return modules, leaves


class WorkAudit:
    """Collects one call's torch work; `summary()` is what crosses back to the parent."""

    def __init__(self, leaves: set[str], on_gpu: bool, launches: Any = None) -> None:
        self.leaves = leaves
        self.on_gpu = on_gpu
        self.launches = launches  # the launch counter: work inside a Triton launch is the launcher's
        self.depth = 0  # > 0 while an allowed function or submodule runs
        self.summary_ = AuditSummary(calls=1)
        self.ok_ops: set[str] = set()  # aten ops whose GPU kernels are accounted for

    def inside_launch(self) -> bool:
        return self.launches is not None and self.launches.depth > 0

    def record(self, func: Any, args: tuple, kwargs: dict, out: Any) -> None:
        name = func._overloadpacket.__name__
        if self.inside_launch():
            self.ok_ops.add(name)  # the interpreter's own copies, inside a launch
            return
        if name in FREE or getattr(func, "is_view", False):
            self.ok_ops.add(name)
            return
        tensors_in = [t for t in _tensors(args) + _tensors(kwargs)]
        if self.on_gpu and self._device_to_host(name, tensors_in, out):
            self.summary_.device_to_host.append(name)
        if self.on_gpu and tensors_in and all(t.device.type == "cpu" for t in tensors_in) and all(
                t.device.type == "cpu" for t in _tensors(out)):
            self.ok_ops.add(name)  # host bookkeeping (autotuner statistics): problem data never got here
            return
        if name in MOVEMENT or name in SYNCING:
            self.summary_.movement_bytes += float(sum(_nbytes(t) for t in tensors_in + _tensors(out)))
            self.ok_ops.add(name)
            return
        flops = _flops(func, args, kwargs, out, tensors_in)
        self.summary_.compute_ops[name] = self.summary_.compute_ops.get(name, 0) + 1
        if self.depth > 0 or name.strip("_") in self.leaves:
            self.summary_.allowed_flops += flops
            self.ok_ops.add(name)
        else:
            self.summary_.torch_flops += max(flops, 1.0)
            self.summary_.refused_ops[name] = self.summary_.refused_ops.get(name, 0) + 1

    def _device_to_host(self, name: str, tensors_in: list[Any], out: Any) -> bool:
        on_device = any(t.device.type != "cpu" for t in tensors_in)
        if name in SYNCING:
            return on_device
        if name in ("_to_copy", "copy_", "_copy_from", "_copy_from_and_resize"):
            return on_device and any(t.device.type == "cpu" for t in _tensors(out))
        return False


def _tensors(obj: Any) -> list[Any]:
    import torch

    if torch.is_tensor(obj):
        return [obj]
    if isinstance(obj, list | tuple):
        return [t for x in obj for t in _tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _tensors(x)]
    return []


def _nbytes(t: Any) -> int:
    return int(t.numel()) * int(t.element_size())


def _flops(func: Any, args: tuple, kwargs: dict, out: Any, tensors_in: list[Any]) -> float:
    from torch.utils.flop_counter import flop_registry

    formula = flop_registry.get(func._overloadpacket)
    if formula is not None:
        with contextlib.suppress(Exception):
            return float(formula(*args, **kwargs, out_val=out))
    return float(max(sum(t.numel() for t in tensors_in), sum(t.numel() for t in _tensors(out)), 1))


@contextlib.contextmanager
def audit_call(model: Any, allowed: list[str], *, on_gpu: bool, launches: Any = None) -> Iterator[WorkAudit]:
    """Audit one forward: dispatch-level work, with allowed submodules and functions attributed, and
    tensor data handed to host Python (numpy, lists) recorded."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    modules, leaves = normalise(allowed)
    audit = WorkAudit(leaves, on_gpu, launches)

    class _Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            audit.record(func, args, kwargs, out)
            return out

    class _Attribute(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raw = getattr(func, "__name__", "")
            if raw in HOST_EXITS and not audit.inside_launch():
                audit.summary_.host_exits.append(raw)
            name = raw.strip("_")
            if name not in leaves:
                return func(*args, **(kwargs or {}))
            audit.depth += 1
            try:
                return func(*args, **(kwargs or {}))
            finally:
                audit.depth -= 1

    handles = _allow_submodules(model, modules, audit)
    try:
        with _Attribute(), _Dispatch():
            yield audit
    finally:
        for h in handles:
            h.remove()


def _allow_submodules(model: Any, paths: set[str], audit: WorkAudit) -> list[Any]:
    """Hooks that mark a named submodule's forward as allowed, if it is a torch.nn class (not the file's own)."""
    import torch

    handles = []
    for path in paths:
        sub = model
        for part in path.split("."):
            sub = getattr(sub, part, None)
        if not isinstance(sub, torch.nn.Module) or not type(sub).__module__.startswith("torch.nn."):
            continue

        def enter(*_: Any) -> None:
            audit.depth += 1

        def leave(*_: Any) -> None:
            audit.depth -= 1

        handles += [sub.register_forward_pre_hook(enter), sub.register_forward_hook(leave)]
    return handles


# ---------------------------------------------------------------- the GPU kernel list (CUDA profiler)


@contextlib.contextmanager
def kernel_profile(enabled: bool) -> Iterator[Any]:
    """A CUDA profiler around the call when asked and possible; yields the profiler or a reason it is off."""
    if not enabled:
        yield ""
        return
    try:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as exc:  # no CUPTI, or a profiler already running
        yield f"skipped: the profiler did not start ({type(exc).__name__})"
        return
    try:
        yield prof
    finally:
        prof.__exit__(None, None, None)


def foreign_kernels(prof: Any, audit: WorkAudit, triton_names: set[str]) -> list[str]:
    """GPU kernels launched under neither a Triton launch nor a torch op the audit accepted."""
    accounted: set[str] = set()
    launched: set[str] = set()
    for evt in prof.events():
        for kernel in getattr(evt, "kernels", []):
            (accounted if _accounted(evt, audit) else launched).add(kernel.name)
        if _is_device_kernel(evt):
            launched.add(evt.name)
    return sorted(k for k in launched - accounted if not any(k == t or k.startswith(t + "_") for t in triton_names))


def _accounted(evt: Any, audit: WorkAudit) -> bool:
    """Whether any enclosing range is a Triton launch or an aten op the audit accepted (the outermost op
    is the one the dispatch mode saw; `aten::copy_` may run inside the `aten::_to_copy` it accepted)."""
    owner = evt
    while owner is not None:
        name = owner.name
        if name.startswith(TRITON_LABEL) or (name.startswith("aten::") and name[len("aten::"):] in audit.ok_ops):
            return True
        owner = owner.cpu_parent
    return False


def _is_device_kernel(evt: Any) -> bool:
    """A kernel on the device timeline; a profiler range (`record_function`, mirrored there as a
    user annotation under the same name, as our own Triton labels are) is not one."""
    kind = str(getattr(evt, "device_type", "")).rsplit(".", 1)[-1]
    if kind not in ("CUDA", "XPU") or getattr(evt, "is_user_annotation", False) or evt.name.startswith(TRITON_LABEL):
        return False
    return "Memcpy" not in evt.name and "Memset" not in evt.name
