"""What torch did during a candidate's forward, seen at the dispatch level (inside the candidate's process).

Every aten operation is classified: views and metadata are free; allocation and data movement
(copies, casts, concatenation, padding) cost bytes but compute nothing; everything else is compute,
counted in FLOPs (torch's own FLOP formulas for GEMMs, convolutions and attention, one per element
otherwise). Each op is attributed by the Python stack that asked for it (frames.py), not by what
happens to be running: Triton's own code inside a launch is the launcher's; candidate code is the
candidate's wherever it runs (forward, a grid callable, a pre-run hook, a tensor-like argument's
method, a host callable handed to a kernel). Compute is allowed only under a declared allowance: a
named torch.nn leaf submodule (`self.conv`), or a torch function by name (`F.conv2d`, `torch.mm`,
`method:sum`), whose entry the harness marks on the stack; candidate code running inside an allowed
call is still the candidate's, and allowed FLOPs are counted per family (gemm, conv, ...) against
the baseline's budget. Tensor data handed to host Python (`.item()`, `float(t)`, `.tolist()`,
`.numpy()`, storages) is refused on every device; device-to-host copies are recorded on GPUs. On
CUDA the profiler's list of GPU kernels shows work launched by no Triton launch and no audited op.

This runs where the candidate runs, so it is evidence only when it condemns; the static checks keep
the candidate from reaching it (no torch._C, no dispatch or profiler APIs, no introspection).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from xe_forge.verify.casts import lossy_cast, run_dtypes
from xe_forge.verify.frames import Attribution, file_kind
from xe_forge.verify.models import AuditSummary

FREE = frozenset({
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous", "is_same_size", "size", "stride",
    "dim", "numel", "_has_compatible_shallow_copy_type", "is_non_overlapping_and_dense", "result_type", "lift_fresh",
    "_unsafe_view", "record_stream", "resize_", "set_",
})
MOVEMENT = frozenset({
    "copy_", "_to_copy", "clone", "contiguous", "cat", "stack", "hstack", "vstack", "concat", "concatenate", "fill_",
    "zero_", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "empty", "empty_like", "empty_strided",
    "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full", "arange", "constant_pad_nd", "pad", "repeat", "lift_fresh_copy", "scalar_tensor", "_copy_from", "_copy_from_and_resize", "narrow_copy",
    "split_with_sizes_copy", "unbind_copy", "expand_copy", "permute_copy", "view_copy", "t_copy", "transpose_copy",
    "unsqueeze_copy", "squeeze_copy", "slice_copy", "select_copy", "as_strided_copy", "alias_copy", "detach_copy",
    "_pin_memory", "split", "split_with_sizes", "unbind", "chunk",
    # fresh random data: written without reading anything
    "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "normal_", "uniform_", "bernoulli_",
    "random_", "randperm",
})
# MOVEMENT is an allowlist: copies, casts, allocation, concatenation and padding, whose output shape and
# layout follow from the input shapes alone. Everything else is compute: a reorder by data or by index
# (flip, roll, sort, gather, index) is work a kernel must do, and an op whose output shape depends on the
# data (below) is compute too, and a host channel besides (its shape is data on the host); a copy of a
# lazy view (conj, neg, another dtype's bits) computes too (lazy_view)
DATA_DEPENDENT = frozenset({"nonzero", "nonzero_static", "argwhere", "masked_select", "_unique", "_unique2",
                            "unique_dim", "unique_consecutive", "unique_dim_consecutive"})
SYNCING = frozenset({"_local_scalar_dense", "item", "equal", "is_nonzero"} | DATA_DEPENDENT)
# dispatched ops whose result is tensor data as a Python value (.item(), float(t), bool(t), torch.equal)
HOST_SCALARS = {"_local_scalar_dense": "item", "item": "item", "is_nonzero": "bool", "equal": "equal"}
TRITON_LABEL = "xe_forge.triton:"
# torch functions that hand tensor data (or its memory) to host Python, where no audit sees what is computed
HOST_EXITS = frozenset({"numpy", "__array__", "from_numpy", "tolist", "item", "__float__", "__int__", "__bool__",
                        "__index__", "__complex__", "__repr__", "__str__", "__format__", "__dlpack__", "untyped_storage",
                        "storage", "_typed_storage", "__reduce_ex__", "__getstate__", "__array_wrap__"})
# aten ops counted together against the FLOP budget: a kept GEMM may reach torch as mm, addmm or linear
GEMM_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "matmul", "linear", "dot", "vdot",
                      "addr", "outer", "ger", "einsum", "tensordot", "addmm_activation"})


def is_compute(name: str, func: Any) -> bool:
    """Whether an aten op computes (counted in FLOPs, refused outside an allowance), by the allowlists above."""
    return not (name in FREE or name in MOVEMENT or name in HOST_SCALARS or getattr(func, "is_view", False))


def family(op: str) -> str:
    """The budget an aten op counts against: 'gemm', 'conv' (every convolution kernel), or the op itself."""
    op = op.strip("_")
    if op in GEMM_OPS:
        return "gemm"
    return "conv" if "conv" in op else op


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
    """Collects one call's torch work; `summary()` is what crosses back to the parent.

    Each op is attributed by the stack that asked for it (frames.py): the launcher's own work and
    the harness's are not the candidate's; an allowance admits what its own entry dispatches, and an
    op that is itself an allowed leaf (`x @ w` under `torch.mm`); everything else is the candidate's.
    """

    def __init__(self, leaves: set[str], on_gpu: bool, launches: Any = None, keep: frozenset[Any] = frozenset()) -> None:
        self.leaves = leaves
        self.keep = keep  # the dtypes the call runs in: a lossy cast to another is compute (casts.py)
        self.on_gpu = on_gpu
        self.attribution = Attribution(in_launch=lambda: launches is not None and launches.depth > 0)
        self.summary_ = AuditSummary(calls=1)
        self.ok_ops: set[str] = set()  # aten ops whose GPU kernels are accounted for
        self.reread: set[tuple[int, Any]] = set()  # (storage, dtype) a view reads as another dtype than its data

    def record(self, func: Any, args: tuple, kwargs: dict, out: Any, frame: Any = None) -> None:
        name = func._overloadpacket.__name__
        if getattr(func, "is_view", False):
            self._note_reinterpretation(args, out)
        if name in FREE or getattr(func, "is_view", False) or getattr(func, "namespace", "") == "profiler":
            # a profiler range (the harness's launch label) touches no tensor data; a kernel file cannot reach
            # the profiler (host_subset.py)
            self.ok_ops.add(name)
            return
        who, _ = self.attribution.who(frame)
        if who in ("launcher", "harness"):
            self.ok_ops.add(name)  # the interpreter's own copies inside a launch; the harness's own work
            return
        tensors_in = [t for t in _tensors(args) + _tensors(kwargs)]
        if self.on_gpu and self._device_to_host(name, tensors_in, out):
            self.summary_.device_to_host.append(name)
        if who == "candidate" and name in HOST_SCALARS:
            self._host_exit(HOST_SCALARS[name])
        if self.on_gpu and tensors_in and all(t.device.type == "cpu" for t in tensors_in) and all(
                t.device.type == "cpu" for t in _tensors(out)):
            self.ok_ops.add(name)  # host bookkeeping: problem data never got here without a copy seen above
            return
        lossy = lossy_cast(name, args, out, self.keep) if self.keep else None
        label = name if lossy is None else f"cast {lossy}"  # a lossy cast computes (casts.py)
        lazy = lazy_view(tensors_in, self.reread) if name in MOVEMENT else None
        label = label if lazy is None else f"{name} of {lazy}"
        if lossy is None and lazy is None and (name in MOVEMENT or name in HOST_SCALARS):
            self.summary_.movement_bytes += float(sum(_nbytes(t) for t in tensors_in + _tensors(out)))
            self.ok_ops.add(name)
            return
        flops = _flops(func, args, kwargs, out, tensors_in)
        self.summary_.compute_ops[label] = self.summary_.compute_ops.get(label, 0) + 1
        if who == "allowed" or name.strip("_") in self.leaves:
            self.summary_.allowed_flops += flops
            fam = family(name)
            self.summary_.allowed_families[fam] = self.summary_.allowed_families.get(fam, 0.0) + flops
            self.ok_ops.add(name)
        else:
            self.summary_.torch_flops += max(flops, 1.0)
            self.summary_.refused_ops[label] = self.summary_.refused_ops.get(label, 0) + 1

    def _note_reinterpretation(self, args: tuple, out: Any) -> None:
        sources, outs = _tensors(args[:1]), _tensors(out)
        if sources and len(outs) == 1 and outs[0].dtype != sources[0].dtype:
            self.reread.add((_storage(outs[0]), outs[0].dtype))

    def _host_exit(self, what: str) -> None:
        if what not in self.summary_.host_exits:
            self.summary_.host_exits.append(what)

    def torch_function(self, raw: str, frame: Any) -> None:
        """A torch function call seen by the mode: tensor data handed to host Python is refused."""
        if raw in HOST_EXITS and self.attribution.who(frame)[0] == "candidate":
            self._host_exit(raw)

    def _device_to_host(self, name: str, tensors_in: list[Any], out: Any) -> bool:
        on_device = any(t.device.type != "cpu" for t in tensors_in)
        if name in SYNCING:
            return on_device
        if name in ("_to_copy", "copy_", "_copy_from", "_copy_from_and_resize"):
            return on_device and any(t.device.type == "cpu" for t in _tensors(out))
        return False


def lazy_view(tensors: list[Any], reread: set[tuple[int, Any]]) -> str | None:
    """What a copy of these tensors would compute, if any (red team 4, R2): a conjugate or negative
    view's bit is resolved by the copy (`x.view(complex64).conj().imag` copied is -x), and a view that
    reads its data as another dtype copies bits as numbers (a float's high half is its bf16). `reread`
    holds the (storage, dtype) pairs such views made: a view's base is not kept across dispatch."""
    for t in tensors:
        if t.is_conj():
            return "a conjugate view"
        if t.is_neg():
            return "a negative view"
        if reread and (_storage(t), t.dtype) in reread:
            return f"data read as {t.dtype}"
    return None


def _storage(t: Any) -> int:
    try:
        return int(t.untyped_storage().data_ptr())
    except Exception:  # a tensor without storage (meta, functional wrappers)
        return -1


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
def audit_call(model: Any, allowed: list[str], *, on_gpu: bool, launches: Any = None,
               inputs: Any = None) -> Iterator[WorkAudit]:
    """Audit one forward: dispatch-level work attributed by the stack that asked for it, allowed
    submodules and functions marked on that stack, and tensor data handed to host Python recorded;
    lossy casts judged against the dtypes of the model's state and of `inputs` (casts.py)."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    modules, leaves = normalise(allowed)
    audit = WorkAudit(leaves, on_gpu, launches, keep=run_dtypes(model, inputs))

    class _Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            body = candidate_op_body(func)
            if body is not None:
                with self:  # the op's body is the file's own code: its torch work is audited like forward's
                    return body(*args, **kwargs)
            out = func(*args, **kwargs)
            audit.record(func, args, kwargs, out, sys._getframe(1))
            return out

    class _Attribute(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raw = getattr(func, "__name__", "")
            audit.torch_function(raw, sys._getframe(1))
            if raw.strip("_") not in leaves:
                return func(*args, **(kwargs or {}))
            entry = audit.attribution.push(sys._getframe(), raw)  # this frame: the allowed call's own work
            try:
                return func(*args, **(kwargs or {}))
            finally:
                audit.attribution.pop(entry)

    handles = _allow_submodules(model, modules, audit)
    try:
        with _Attribute(), _Dispatch():
            yield audit
    finally:
        for h in handles:
            h.remove()


def candidate_op_body(func: Any) -> Any:
    """The Python body of a custom op the kernel file defined with `torch.library.triton_op`, else None.

    Dispatch hands a custom op to the mode whole, and what its kernel runs would be out of the
    mode's sight; running the body itself under the mode audits it like forward (its launches are
    counted by the launch hooks as any other). Only triton_op's own registration qualifies: an op
    given another kernel, an autograd formula or a mode rule would run other code in production
    than the body checked here, so it is left to the audit as the torch op it is (and refused)."""
    if getattr(func, "namespace", "aten") in ("aten", "prims", "quantized", "_c10d_functional"):
        return None
    from torch._library.custom_ops import OPDEFS
    from torch._subclasses.functional_tensor import FunctionalTensorMode

    opdef = OPDEFS.get(func._schema.name)
    if opdef is None:
        return None
    body, wrapper = opdef._abstract_fn, opdef._init_fn
    if body is None or not _holds(wrapper, body):
        return None  # not the wrapper triton_op builds around the body it also registers as the fake
    default = opdef._backend_fns.get(None)
    if set(opdef._backend_fns) != {None} or not _holds(default, wrapper) or opdef._backward_fn \
            or opdef._setup_context_fn or opdef._vmap_fn or set(opdef._torch_dispatch_fns) - {FunctionalTensorMode}:
        return None
    code = getattr(body, "__code__", None)
    return body if code is not None and file_kind(code.co_filename) == "candidate" else None


def _holds(fn: Any, inner: Any, depth: int = 3) -> bool:
    """Whether `fn` is a closure over `inner`, through at most `depth` wrappers (how torch wraps a
    custom op's function: `_disable_dynamo` around `register_kernel`'s wrapper around it)."""
    cells = [_cell(c) for c in getattr(fn, "__closure__", None) or ()]
    return any(c is inner for c in cells) or depth > 1 and any(callable(c) and _holds(c, inner, depth - 1)
                                                               for c in cells)


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def allowed_submodule(model: Any, path: str) -> Any:
    """The submodule an allowance `self.<path>` names, if it may be one: a torch.nn leaf module (no
    children: a container would admit whatever it holds) of torch's own class, whose forward is the
    class's own (not an instance attribute)."""
    import torch

    sub = model
    for part in path.split("."):
        sub = getattr(sub, part, None)
    if not isinstance(sub, torch.nn.Module) or not type(sub).__module__.startswith("torch.nn."):
        return None
    if any(True for _ in sub.children()) or "forward" in vars(sub):
        return None
    return sub


def _allow_submodules(model: Any, paths: set[str], audit: WorkAudit) -> list[Any]:
    """Hooks that mark a named submodule's call on the stack as that allowance's entry."""
    handles = []
    for path in paths:
        sub = allowed_submodule(model, path)
        if sub is None:
            continue
        entries: list[Any] = []

        def enter(*_: Any, path: str = path, entries: list[Any] = entries) -> None:
            entries.append(audit.attribution.push(sys._getframe(1), f"self.{path}"))  # the module's call frame

        def leave(*_: Any, entries: list[Any] = entries) -> None:
            if entries:
                audit.attribution.pop(entries.pop())

        handles += [sub.register_forward_pre_hook(enter), sub.register_forward_hook(leave, always_call=True)]
    return handles
