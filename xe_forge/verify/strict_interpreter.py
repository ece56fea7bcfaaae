"""Triton's interpreter, made as strict as a GPU where it is forgiving (red team 3, root cause 6).

The CPU checks kernels by interpreting them, and the interpreter accepts three things a GPU does not
promise:

- a masked load without `other=` reads 0 in its masked-off lanes; on a GPU those lanes are
  undefined (Triton's documentation), so a kernel that sums them is right here and wrong there.
  Here they read NaN (floating) or the type's largest value (integers): a kernel that lets them
  reach its output fails its trials, one that never uses them is unaffected;
- `tl.multiple_of(x, n)` is a promise the compiler builds aligned, vectorised accesses on; the
  interpreter ignores it. Here the promise is checked where it can be: a scalar must be a multiple of
  n, and so must the first element of a tensor (offsets start a multiple, as `pid * BLOCK + arange`
  does; the elements after it are a contiguous run, which the hint does not constrain);
- a load or store may reach any address of the process; on a GPU an address outside the buffers a
  launch was given faults or reads another allocation (red team 4, R5). Here every unmasked lane's
  address must lie inside the storage of a tensor the launch was given;
- a grid of any size runs; CUDA refuses grid y or z above 65535 and x above 2**31 - 1, so a kernel
  that launches such a grid cannot run on every target, and fails here as it would there.

Installed once in the candidate's process, before any candidate is imported (hooks.install), and
only where the interpreter runs. A Triton without these internals leaves the interpreter as it is.
"""

from __future__ import annotations

from typing import Any

GRID_LIMITS = (2**31 - 1, 65535, 65535)  # CUDA's grid limits in x, y, z (the strictest of the targets)

_INSTALLED: list[bool] = []


class HintBroken(ValueError):
    """A tl.multiple_of promise that the values do not keep."""


def install() -> bool:
    """Patch the interpreter (idempotent); False where this Triton's interpreter has other internals."""
    if _INSTALLED:
        return True
    try:
        from triton.runtime import interpreter as interp
    except ImportError:
        return False
    builder = getattr(interp, "InterpreterBuilder", None)
    executor = getattr(interp, "GridExecutor", None)
    needed = (getattr(builder, "create_masked_load", None), getattr(builder, "set_grid_dim", None),
              getattr(interp, "_patch_lang_core", None), getattr(builder, "create_masked_store", None),
              getattr(executor, "_init_args_hst", None))
    if builder is None or not all(callable(f) for f in needed):
        return False
    executor._init_args_hst = _recording_buffers(executor._init_args_hst)
    builder.create_masked_load = _bounded("load", _poisoned_load(builder.create_masked_load, interp), interp)
    builder.create_masked_store = _bounded("store", builder.create_masked_store, interp)
    builder.set_grid_dim = _limited_grid(builder.set_grid_dim)
    interp._patch_lang_core = _checked_hints(interp._patch_lang_core)
    _INSTALLED.append(True)
    return True


def masked_off_value(dtype: Any) -> Any:
    """What a masked-off lane reads: NaN for floating types, the largest value for integers, else None
    (booleans: left to the interpreter)."""
    import numpy as np

    if np.issubdtype(dtype, np.floating):
        return np.nan
    if np.issubdtype(dtype, np.integer) and dtype != np.bool_:
        return np.iinfo(dtype).max
    return None


def _poisoned_load(original: Any, interp: Any) -> Any:
    import numpy as np

    def create_masked_load(self: Any, ptrs: Any, mask: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        if other is None and not bool(np.all(mask.data)):
            dtype_tt = ptrs.get_element_ty()
            dtype_np = interp._get_np_dtype(dtype_tt)
            fill = masked_off_value(np.dtype(dtype_np))
            if fill is not None:
                other = interp.TensorHandle(np.full(ptrs.data.shape, fill, dtype=dtype_np), dtype_tt)
        return original(self, ptrs, mask, other, *args, **kwargs)

    return create_masked_load


class OutOfBounds(ValueError):
    """An unmasked lane's address outside every buffer the launch was given."""


_BUFFERS: list[Any] = []  # the current launch's [starts, ends) of its tensors' storages, sorted


def _recording_buffers(original: Any) -> Any:
    def init_args_hst(self: Any, args_dev: Any, kwargs: Any) -> Any:
        args_hst, kwargs_hst = original(self, args_dev, kwargs)
        _BUFFERS[:] = [buffer_ranges([*args_hst, *kwargs_hst.values()])]
        return args_hst, kwargs_hst

    return init_args_hst


def buffer_ranges(args: list[Any]) -> Any:
    """Sorted (starts, ends) of the storages of the tensors among `args` (tuples and descriptors opened)."""
    import numpy as np

    spans: dict[int, int] = {}

    def visit(arg: Any) -> None:
        if isinstance(arg, (tuple, list)):
            for a in arg:
                visit(a)
            return
        base = getattr(arg, "base", None)
        if base is not None and hasattr(base, "untyped_storage") and not hasattr(arg, "untyped_storage"):
            arg = base  # a TensorDescriptor: its base tensor
        storage = getattr(arg, "untyped_storage", None)
        if callable(storage):
            s = storage()
            spans[int(s.data_ptr())] = int(s.data_ptr()) + int(s.nbytes())

    visit(args)
    starts = np.array(sorted(spans), dtype=np.uint64)
    return starts, np.array([spans[int(s)] for s in starts], dtype=np.uint64)


def check_bounds(kind: str, ptrs: Any, mask: Any, itemsize: int) -> None:
    """Raise OutOfBounds where an unmasked lane's element is not inside one of the launch's buffers."""
    import numpy as np

    if not _BUFFERS:
        return
    starts, ends = _BUFFERS[0]
    address = np.asarray(ptrs, dtype=np.uint64).reshape(-1)
    if mask is not None:
        address = address[np.broadcast_to(np.asarray(mask, dtype=bool), np.shape(ptrs)).reshape(-1)]
    if address.size == 0:
        return
    slot = np.searchsorted(starts, address, side="right").astype(np.int64) - 1
    inside = slot >= 0
    inside[inside] &= address[inside] + np.uint64(itemsize) <= ends[slot[inside]]
    if not bool(inside.all()):
        bad = int((~inside).sum())
        raise OutOfBounds(f"a {kind} reaches {bad} of {address.size} unmasked lanes outside every tensor the launch "
                          "was given: on a GPU that faults or touches another allocation; mask the lanes past the "
                          "tensor's end")


def _bounded(kind: str, original: Any, interp: Any) -> Any:
    import numpy as np

    def access(self: Any, ptrs: Any, *args: Any, **kwargs: Any) -> Any:
        mask = args[1] if kind == "store" else args[0]  # (value, mask, ...) for a store, (mask, other, ...) for a load
        itemsize = np.dtype(interp._get_np_dtype(ptrs.get_element_ty())).itemsize
        check_bounds(kind, ptrs.data, getattr(mask, "data", None), itemsize)
        return original(self, ptrs, *args, **kwargs)

    return access


def _limited_grid(original: Any) -> Any:
    def set_grid_dim(self: Any, nx: int, ny: int, nz: int) -> Any:
        for axis, (size, limit) in enumerate(zip((nx, ny, nz), GRID_LIMITS, strict=True)):
            if int(size) > limit:
                raise ValueError(f"grid dimension {'xyz'[axis]} is {int(size)}, past the {limit} a GPU launch "
                                 "accepts (CUDA); put the large count on x, or loop inside the program")
        return original(self, nx, ny, nz)

    return set_grid_dim


def _checked_hints(original: Any) -> Any:
    def patch_lang_core(lang: Any, scope: Any) -> Any:
        result = original(lang, scope)
        # tl.max_contiguous / tl.max_constancy are not checked: TorchInductor's GEMM template (after
        # triton.ops.matmul) promises contiguity of `rm % M`, false in a ragged last block, harmlessly so
        # on a GPU (only rows past M, whose results are masked, wrap); checking runs refused honest ports
        hinted = getattr(lang, "multiple_of", None)
        if callable(hinted):
            scope.set_attr(lang, "multiple_of", _checked_multiple_of(hinted))
        return result

    return patch_lang_core


def _checked_multiple_of(hinted: Any) -> Any:
    def multiple_of(input: Any, values: Any, *args: Any, **kwargs: Any) -> Any:
        check_multiple_of(input, values)
        return hinted(input, values, *args, **kwargs)

    return multiple_of


def check_multiple_of(input: Any, values: Any) -> None:
    """Raise HintBroken where a scalar, or a tensor's first element, is not a multiple of the hint."""
    import numpy as np

    steps = [getattr(v, "value", v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    data = getattr(getattr(input, "handle", None), "data", None)
    if data is None:
        value = getattr(input, "value", input)  # a host int (a constexpr, an induction variable)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            _require(int(value), steps[0])
        return
    flat = np.asarray(data).reshape(-1)
    if flat.size and np.issubdtype(flat.dtype, np.integer):
        _require(int(flat[0]), steps[0])


def _require(value: int, step: Any) -> None:
    step = int(step)
    if step > 0 and value % step:
        raise HintBroken(f"tl.multiple_of promises a multiple of {step}, but the value is {value}: a GPU "
                         "build would use aligned accesses that this input breaks")
