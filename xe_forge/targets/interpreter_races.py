"""Programs of one interpreted launch run in a secret order and, in most launches, do not see each other's stores.

Triton's interpreter runs a launch's programs one after another, in grid order, so a kernel that
depends on that order is exact on the CPU and wrong on a GPU, where programs run at once: a plain
load + store accumulation into one address from many programs (updates lost), or "the program with
the highest id sums the partials the others wrote" (red team 2, root cause 4). Here, in every
launch:

- the programs run in a random permutation of the grid (the permutation is drawn per launch from a
  secret stream, so no program id is reliably first or last);
- in most launches (STALE_SHARE), a program's load of an address that another program of the same
  launch stored to (non-atomically) reads the value it had when the launch started, as a GPU's
  program may when the two run at once; a program sees its own stores, and after its first atomic
  (an atomic add, cas or exchange, the way programs synchronise) it sees everything.

A race-free kernel computes the same in every order and view, so honest kernels are unaffected; a
racy one is wrong on most launches, which the comparison with the reference then shows. The
remaining launches keep the plain serial view in the random order, so a kernel cannot use a stale
read to tell the harness from a GPU.
"""

from __future__ import annotations

import random
import secrets
from typing import Any

STALE_SHARE = 0.75
_RNG = random.Random(secrets.randbits(64))


class _Launch:
    """One launch's memory ranges, its order, and (in a stale launch) each written range's snapshot and writers."""

    def __init__(self, extents: list[tuple[int, int]], stale: bool) -> None:
        self.ranges = _merged(extents)
        self.stale = stale
        self.shadow: dict[int, tuple[Any, Any]] = {}  # range index -> (bytes at launch start, writer per byte)
        self.perm: Any = None
        self.dims = (1, 1, 1)
        self.pid = 0
        self.synced = False


_CURRENT: list[_Launch | None] = [None]


def _merged(extents: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping views of one buffer become one range (a store through one is a store through all)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(e for e in extents if e[1] > e[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _extents(values: Any, out: list[tuple[int, int]]) -> None:
    """The bytes each tensor argument's view spans (from its data pointer, sizes and strides: no storage
    is asked for, which the audit would count as tensor data handed to host code)."""
    if isinstance(values, dict):
        values = list(values.values())
    if isinstance(values, list | tuple):
        for v in values:
            _extents(v, out)
        return
    for t in (values, getattr(values, "base", None)):  # a TensorDescriptor's tensor
        if not (callable(getattr(t, "data_ptr", None)) and callable(getattr(t, "stride", None))):
            continue
        try:
            if t.device.type != "cpu" or t.numel() == 0:
                continue
            span = 1 + sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride(), strict=True))
            start = int(t.data_ptr())
            out.append((start, start + span * int(t.element_size())))
        except (RuntimeError, TypeError, ValueError, AttributeError):
            continue


def patch_program_order() -> None:
    """Install the order and the launch-start view in Triton's interpreter (idempotent)."""
    import numpy as np
    from triton.runtime import interpreter

    builder, executor = interpreter.InterpreterBuilder, interpreter.GridExecutor
    if getattr(builder.set_grid_idx, "_xe_forge_order", False):
        return
    init_args, grid_dim, grid_idx = executor._init_args_hst, builder.set_grid_dim, builder.set_grid_idx
    load, store = builder.create_masked_load, builder.create_masked_store

    def _init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        found: list[tuple[int, int]] = []
        _extents([args_hst, kwargs_hst], found)
        _CURRENT[0] = _Launch(found, stale=_RNG.random() < STALE_SHARE)
        return args_hst, kwargs_hst

    def set_grid_dim(self, nx, ny, nz):
        grid_dim(self, nx, ny, nz)
        launch = _CURRENT[0]
        if launch is None:
            launch = _CURRENT[0] = _Launch([], stale=False)
        launch.dims = (nx, ny, nz)
        launch.perm = np.random.default_rng(_RNG.getrandbits(63)).permutation(nx * ny * nz)

    def set_grid_idx(self, x, y, z):
        launch = _CURRENT[0]
        if launch is None or launch.perm is None:
            return grid_idx(self, x, y, z)
        _, ny, nz = launch.dims
        pid = int(launch.perm[(x * ny + y) * nz + z])
        launch.pid, launch.synced = pid, False
        return grid_idx(self, pid // (ny * nz), (pid // nz) % ny, pid % nz)

    def create_masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        ret = load(self, ptrs, mask, other, cache_policy, is_volatile)
        launch = _CURRENT[0]
        if launch is not None and launch.stale and launch.shadow and not launch.synced:
            _stale_reads(launch, ptrs.data, mask.data, ret.data)
        return ret

    def create_masked_store(self, ptrs, value, mask, cache_policy):
        launch = _CURRENT[0]
        if launch is not None and launch.stale:
            _mark_writes(launch, ptrs.data, mask.data)
        return store(self, ptrs, value, mask, cache_policy)

    def synchronising(original):
        def op(self, *args, **kwargs):
            launch = _CURRENT[0]
            if launch is not None:
                launch.synced = True
            return original(self, *args, **kwargs)

        return op

    for name in ("create_atomic_rmw", "create_atomic_cas", "create_atomic_load", "create_atomic_poll"):
        if hasattr(builder, name):
            setattr(builder, name, synchronising(getattr(builder, name)))
    set_grid_idx._xe_forge_order = True
    executor._init_args_hst = _init_args_hst
    builder.set_grid_dim, builder.set_grid_idx = set_grid_dim, set_grid_idx
    builder.create_masked_load, builder.create_masked_store = create_masked_load, create_masked_store


def _in_range(launch: _Launch, ptrs: Any, mask: Any) -> list[tuple[int, Any, Any]]:
    """(range index, flat positions, byte offsets) of the masked pointers inside each known storage."""
    import numpy as np

    flat = ptrs.reshape(-1)
    live = np.broadcast_to(mask, ptrs.shape).reshape(-1)
    out = []
    for i, (start, end) in enumerate(launch.ranges):
        sel = live & (flat >= start) & (flat < end)
        if sel.any():
            where = np.nonzero(sel)[0]
            out.append((i, where, (flat[where] - np.uint64(start)).astype(np.int64)))
    return out


def _mark_writes(launch: _Launch, ptrs: Any, mask: Any) -> None:
    import ctypes

    import numpy as np

    for i, _, offs in _in_range(launch, ptrs, mask):
        if i not in launch.shadow:  # the first store into this storage: it still holds the launch-start bytes
            start, end = launch.ranges[i]  # read as raw memory: no torch op (the audit would see the kernel's)
            raw = np.frombuffer((ctypes.c_uint8 * (end - start)).from_address(start), dtype=np.uint8).copy()
            launch.shadow[i] = (raw, np.full(raw.shape, -1, dtype=np.int32))
        launch.shadow[i][1][offs] = launch.pid


def _stale_reads(launch: _Launch, ptrs: Any, mask: Any, ret: Any) -> None:
    """Where another program of this launch stored, the loaded value becomes the launch-start one."""
    import numpy as np

    size = ret.dtype.itemsize
    for i, where, offs in _in_range(launch, ptrs, mask):
        if i not in launch.shadow:
            continue
        raw, writer = launch.shadow[i]
        who = writer[offs]
        other = (who >= 0) & (who != launch.pid)
        if not other.any():
            continue
        at = offs[other]
        if int(at.max()) + size > raw.size:
            continue
        old = raw[at[:, None] + np.arange(size)].copy().view(ret.dtype).reshape(-1)
        np.put(ret, where[other], old)
