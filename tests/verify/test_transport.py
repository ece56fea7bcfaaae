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
