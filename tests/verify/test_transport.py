"""Outputs from the runner to the judge: files off the GPU, validated IPC records on it.

The IPC path itself needs a CUDA device (benchmarks/gpu_issue25.sh runs `check` through it on the
H200); here: the CPU falls back to files, and the judge refuses every malformed record before it
touches a device.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from xe_forge.verify.transport import MAGIC, is_ipc, load_outputs, read_outputs, write_outputs


def test_cpu_outputs_travel_as_files_even_when_ipc_is_asked(tmp_path: Path) -> None:
    path = str(tmp_path / "out.pt")
    outputs = [torch.arange(6.0).reshape(2, 3).t(), 3]
    write_outputs(outputs, path, ipc=True)
    assert not is_ipc(path)
    got = load_outputs(path, [torch.zeros(3, 2)])
    assert torch.equal(got[0], outputs[0]) and got[0].stride() == (1, 3) and got[1] == 3


GOOD = {"kind": "cuda", "dtype": "float32", "size": [4, 4], "stride": [4, 1], "offset": 0, "device": 0,
        "handle": "AAAA", "size_bytes": 64, "offset_bytes": 0, "rc_handle": "AAAA", "rc_offset": 0, "event": None,
        "sync": False}


def _write(tmp_path: Path, records: object) -> str:
    path = tmp_path / "out.pt"
    path.write_bytes(MAGIC + json.dumps(records).encode())
    return str(path)


@pytest.mark.parametrize("change, why", [
    ({"size": [4, 5]}, "past the storage"),  # 20 floats in a 64-byte storage
    ({"offset": 1}, "past the storage"),
    ({"stride": [5, 1]}, "past the storage"),
    ({"size_bytes": 1 << 40}, "far too large"),
    ({"dtype": "complex64"}, "known dtype"),
    ({"kind": "pickle"}, "known dtype"),
    ({"size": [4, -4]}, "integer"),
    ({"size": [4.0, 4]}, "integer"),
    ({"stride": [4]}, "disagree"),
    ({"handle": 7}, "not a string"),
])
def test_the_judge_refuses_a_malformed_record_before_mapping_anything(tmp_path: Path, change: dict, why: str) -> None:
    path = _write(tmp_path, [GOOD | change])
    with pytest.raises(ValueError, match=why):
        read_outputs(path, limit=1 << 20, device="cpu")
    assert "cannot be read" in load_outputs(path, [torch.zeros(4, 4)])


def test_numbers_pass_and_other_values_do_not(tmp_path: Path) -> None:
    assert read_outputs(_write(tmp_path, [{"kind": "value", "value": 2.5}]), 1 << 20, "cpu") == [2.5]
    with pytest.raises(ValueError, match="not a number"):
        read_outputs(_write(tmp_path, [{"kind": "value", "value": {"__reduce__": "os.system"}}]), 1 << 20, "cpu")
    with pytest.raises(ValueError, match="not a list"):
        read_outputs(_write(tmp_path, {"kind": "value"}), 1 << 20, "cpu")


# ---------------------------------------------------------------- the judge's inputs and weights for the runner


@pytest.mark.parametrize("layout", ["transposed", "column slice", "expanded", "step 2"])
def test_a_shipped_span_rebuilds_the_exact_layout_a_kernel_must_honour(layout: str) -> None:
    from xe_forge.problem.layouts import lay_out
    from xe_forge.verify.transport import from_span, span_of

    x = lay_out(torch.arange(1.0, 37.0).reshape(4, 9), layout)
    span = span_of(x)
    assert span.is_contiguous() and span.numel() <= x.untyped_storage().nbytes() // x.element_size()
    got = from_span(span.clone(), list(x.shape), list(x.stride()), 0)
    assert torch.equal(got, x) and got.stride() == x.stride()
    assert got.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()  # the runner's own copy


def test_off_cuda_a_shipment_is_a_file_and_loads_as_it_was_written(tmp_path: Path) -> None:
    from xe_forge.problem.layouts import lay_out
    from xe_forge.verify.transport import Shipment, load_shipped

    ship = Shipment()
    inputs = [lay_out(torch.randn(3, 5), "transposed"), 4, 0.5]
    ship.write(inputs, str(tmp_path / "in.pt"), "run")
    state = {"weight": torch.randn(5, 5), "steps": torch.tensor(3)}
    ship.write(state, str(tmp_path / "state.pt"), "run")
    assert not is_ipc(str(tmp_path / "in.pt")) and not ship.held  # nothing held for a file
    got = load_shipped(str(tmp_path / "in.pt"), "cpu")
    assert torch.equal(got[0], inputs[0]) and got[0].stride() == inputs[0].stride() and got[1:] == [4, 0.5]
    loaded = load_shipped(str(tmp_path / "state.pt"), "cpu")
    assert set(loaded) == {"weight", "steps"} and torch.equal(loaded["weight"], state["weight"])


def test_a_shipped_record_rebuilds_its_view_on_a_copy_of_the_span(tmp_path: Path, monkeypatch) -> None:
    """The CUDA mapping itself runs on the H200 (benchmarks/ipc_smoke.py); here the record's numbers: a
    view whose strides reach past the shipped span is refused before anything is mapped."""
    import xe_forge.verify.transport as transport

    record = {**GOOD, "size": [4, 9], "stride": [1, 4], "size_bytes": 4 * 36}  # a transposed 9x4, 36 elements
    monkeypatch.setattr(torch.UntypedStorage, "_new_shared_cuda", staticmethod(
        lambda *a: torch.arange(36.0).untyped_storage()), raising=False)
    monkeypatch.setattr(torch.cuda, "init", lambda: None)
    got = transport._open(record, "cpu", 1 << 20, keep_layout=True)
    assert got.stride() == (1, 4) and torch.equal(got, torch.arange(36.0).as_strided((4, 9), (1, 4)))
    with pytest.raises(ValueError):
        transport._open({**record, "stride": [1, 5]}, "cpu", 1 << 20, keep_layout=True)
