"""A candidate's outputs from the runner to the judge: CUDA IPC handles on a GPU, `torch.save` files elsewhere.

On a GPU most of a check's wall time was moving outputs: each one copied to the host, pickled into
/dev/shm, read back and copied to the device again (a convolution's 1 GB output, for every trial and
unseen shape). CUDA lets another process map the allocation instead. The runner writes a small JSON
record per tensor (the IPC handle of its allocation, the view's size, strides and offset, the event
that orders the read after the kernels that wrote it); the judge maps it, copies the view into its
own memory at once and lets the mapping go, so nothing the candidate does afterwards can reach the
copy it compares. Nothing in the record is unpickled: the judge builds the tensor itself from
validated numbers, with classes and dtypes of its own choosing, and refuses a view that reaches past
the storage it claims. Torch's IPC reference count keeps the runner's block alive until the judge
has let it go, so the runner may drop the outputs as soon as it has written the record.
XE_FORGE_OUTPUT_IPC=0 turns it off (files everywhere).

The other way, the judge's inputs and weights for the runner (a convolution's 0.5 GB input per trial
cost 1.5 s of host copy and pickling each, 18 s of a 50 s preparation on the H200) travel the same
way with two differences (`Shipment`). An IPC handle maps the whole allocator segment that holds the
tensor, not the tensor alone, and the judge's segments hold the outputs a candidate is compared
with: so everything shipped is first copied into a private memory pool that holds nothing else, and
the judge never reads those copies again (it keeps its own). And a kernel must meet the inputs in
their layout (transposed, a row repeated with stride 0, every second element): the runner copies the
storage span the view covers and rebuilds the same view on its copy, then lets the mapping go before
any candidate code runs with them.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

MAGIC = b"XFIPC1\n"
DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool")
"""The dtypes an output may have; anything else is refused."""


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise ValueError("a handle is not a string")
    return base64.b64decode(text.encode("ascii"), validate=True)


def _record(value: Any) -> dict[str, Any] | None:
    """One output as a record, or None where IPC cannot carry it (the caller then writes a file)."""
    import torch

    if isinstance(value, bool | int | float) or value is None:
        return {"kind": "value", "value": value}
    if type(value) is not torch.Tensor or not value.is_cuda or str(value.dtype).removeprefix("torch.") not in DTYPES:
        return None
    value = value.detach()
    if value.numel() == 0:
        return None
    device, handle, size_bytes, offset_bytes, rc_handle, rc_offset, event, sync = value.untyped_storage()._share_cuda_()
    return {"kind": "cuda", "dtype": str(value.dtype).removeprefix("torch."), "size": list(value.shape),
            "stride": list(value.stride()), "offset": value.storage_offset(), "device": int(device),
            "handle": _b64(handle), "size_bytes": int(size_bytes), "offset_bytes": int(offset_bytes),
            "rc_handle": _b64(rc_handle), "rc_offset": int(rc_offset), "event": _b64(event), "sync": bool(sync)}


def write_outputs(outputs: list[Any], path: str, *, ipc: bool) -> None:
    """Outputs for the judge at `path`: IPC records where `ipc` and every tensor is on a CUDA device."""
    import torch

    if ipc and os.environ.get("XE_FORGE_OUTPUT_IPC", "1") != "0":
        try:
            records = [_record(o) for o in outputs]
        except (RuntimeError, TypeError):
            records = [None]
        if all(r is not None for r in records):
            with open(path, "wb") as fh:
                fh.write(MAGIC + json.dumps(records).encode())
            return
    torch.save([o.detach().cpu() if torch.is_tensor(o) else o for o in outputs], path)


def is_ipc(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(MAGIC)) == MAGIC


def _int(value: Any, low: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{value!r} is not an integer >= {low}")
    return value


def _open(record: dict[str, Any], device: str, limit: int, *, keep_layout: bool = False) -> Any:
    """This process's own copy of one shared tensor, after checking every number in its record; with
    `keep_layout`, the same view (sizes, strides, offset within its span) on a copy of its span."""
    import torch

    if record.get("kind") == "value":
        value = record.get("value")
        if not (isinstance(value, bool | int | float) or value is None):
            raise ValueError("a non-tensor output is not a number")
        return value
    if record.get("kind") != "cuda" or record.get("dtype") not in DTYPES:
        raise ValueError("an output record is neither a number nor a CUDA tensor of a known dtype")
    dtype = getattr(torch, record["dtype"])
    size = [_int(s) for s in record["size"]]
    stride = [_int(s) for s in record["stride"]]
    offset, size_bytes = _int(record["offset"]), _int(record["size_bytes"])
    if len(size) != len(stride) or len(size) > 8:
        raise ValueError("an output's size and strides disagree")
    numel = 1
    for s in size:
        numel *= s
    extent = offset + 1 + sum((s - 1) * st for s, st in zip(size, stride, strict=True)) if numel else 0
    item = torch.empty((), dtype=dtype).element_size()
    if numel == 0 or extent * item > size_bytes or size_bytes > limit:
        raise ValueError("an output's view reaches past the storage it claims, or the storage is far too large")
    event = record.get("event")
    args = (_int(record["device"]), _unb64(record["handle"]), size_bytes, _int(record["offset_bytes"]),
            _unb64(record["rc_handle"]), _int(record["rc_offset"]), None if event is None else _unb64(event),
            bool(record.get("sync")))  # every field read and checked before CUDA is touched
    torch.cuda.init()  # mapping a handle needs this process's CUDA context (torch's own rebuild does the same)
    storage = torch.UntypedStorage._new_shared_cuda(*args)
    if keep_layout:
        span = torch.empty(0, dtype=dtype, device=storage.device).set_(storage, 0, (extent,), (1,))
        copy = from_span(span.clone().to(device), size, stride, offset)
        del span, storage
        return copy
    view = torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset, size, stride)
    copy = view.clone().to(device)
    del view, storage
    return copy


def span_of(x: Any) -> Any:
    """A contiguous copy of the storage elements view `x` covers, from its offset to its last element
    (what a view's layout needs to be rebuilt: `from_span(span, x.shape, x.stride(), 0)`)."""
    extent = 1 + sum((s - 1) * st for s, st in zip(x.shape, x.stride(), strict=True)) if x.numel() else 0
    return x.as_strided((extent,), (1,), x.storage_offset()).clone()


def from_span(span: Any, size: list[int], stride: list[int], offset: int) -> Any:
    """The view `size`/`stride`/`offset` over `span`, a tensor of this process's own."""
    return span.as_strided(tuple(size), tuple(stride), offset)


class Shipment:
    """The judge's inputs and weights for the runner: IPC records of copies in a private CUDA memory pool
    (nothing of the judge's own shares their segments), held per work folder until it is released;
    `torch.save` files off CUDA, where the pool API is missing, or with XE_FORGE_OUTPUT_IPC=0."""

    def __init__(self) -> None:
        self.pool: Any = None
        self.held: dict[str, list[Any]] = {}

    def write(self, values: list[Any] | dict[str, Any], path: str, folder: str) -> None:
        import torch

        keys = list(values) if isinstance(values, dict) else None
        items = list(values.values()) if isinstance(values, dict) else list(values)
        if self._usable(items):
            try:
                if self.pool is None:
                    self.pool = torch.cuda.MemPool()
                with torch.cuda.use_mem_pool(self.pool):
                    spans = [span_of(x.detach()) if torch.is_tensor(x) else x for x in items]
                records = [_record(s) for s in spans]
                if all(r is not None for r in records):
                    for r, x in zip(records, items, strict=True):
                        if torch.is_tensor(x):  # the view over the shipped span, as the runner rebuilds it
                            r.update(size=list(x.shape), stride=list(x.stride()), offset=0)
                    self.held.setdefault(folder, []).append(spans)
                    with open(path, "wb") as fh:
                        fh.write(MAGIC + json.dumps({"keys": keys, "records": records}).encode())
                    return
            except (RuntimeError, TypeError, AttributeError):
                pass  # files below
        if keys is not None:
            torch.save({k: v.detach().cpu() if torch.is_tensor(v) else v for k, v in values.items()}, path)
        else:
            torch.save(items, path)

    def release(self, folder: str) -> None:
        self.held.pop(folder, None)

    @staticmethod
    def _usable(items: list[Any]) -> bool:
        import torch

        tensors = [x for x in items if torch.is_tensor(x)]
        return (os.environ.get("XE_FORGE_OUTPUT_IPC", "1") != "0" and bool(tensors)
                and all(type(x) is torch.Tensor and x.is_cuda and x.numel() > 0 for x in tensors)
                and hasattr(torch.cuda, "MemPool") and hasattr(torch.cuda, "use_mem_pool"))


def load_shipped(path: str, device: str) -> Any:
    """What the judge shipped (`Shipment.write`): a list, or a dict of tensors, on `device`."""
    import torch

    if not is_ipc(path):
        return torch.load(path, map_location=device, weights_only=True)
    with open(path, "rb") as fh:
        body = json.loads(fh.read()[len(MAGIC):])
    values = [_open(r, device, 1 << 40, keep_layout=True) for r in body["records"]]
    return dict(zip(body["keys"], values, strict=True)) if body.get("keys") is not None else values


def read_outputs(path: str, limit: int, device: str) -> list[Any]:
    """The outputs the runner wrote as IPC records; ValueError (or a CUDA error) for anything malformed."""
    if os.path.getsize(path) > (1 << 20):
        raise ValueError("the output record is far larger than any list of handles")
    with open(path, "rb") as fh:
        text = fh.read()[len(MAGIC):]
    records = json.loads(text)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError("the output record is not a list")
    return [_open(r, device, limit) for r in records]


__all__ = ["Shipment", "is_ipc", "load_shipped", "read_outputs", "write_outputs"]


OUTPUT_SLACK = 4  # an output file may be at most this many times the expected bytes (plus 1 MiB)


def load_outputs(path: str, want: list[Any], device: str = "cpu") -> list[Any] | str:
    """The candidate's outputs, refusing anything but a list of plain tensors and numbers of sane size."""
    import torch

    if not os.path.isfile(path):
        return "the candidate produced no output"
    limit = OUTPUT_SLACK * sum(w.numel() * 8 for w in want if torch.is_tensor(w)) + (1 << 20)
    if os.path.getsize(path) > limit:
        return "the candidate's output is far larger than the reference's"
    try:
        got = (read_outputs(path, limit, device) if is_ipc(path)
               else torch.load(path, map_location=device, weights_only=True))
    except Exception as exc:
        return f"the candidate's output cannot be read: {type(exc).__name__}: {str(exc)[:200]}"
    if not isinstance(got, list):
        return "the candidate's output is not a list of tensors"
    return got
