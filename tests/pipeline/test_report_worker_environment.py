"""The run report records the environment the device set in its workers (xpu-block-io-all-layouts-off):
the output kernel was measured under it, so its user needs it too."""

from __future__ import annotations

import json

from xe_forge.pipeline.report import RunReport, render_markdown


def test_the_worker_environment_is_in_report_md_and_json():
    r = RunReport(run_id="x", status="improved", kernel="/k.py", device="xpu", target="intel-xe2",
                  toolchain="triton-xpu 3.7.0", worker_environment={"TRITON_INTEL_ENABLE_BLOCK_IO_ALL_LAYOUTS": "1"})
    assert "- worker environment: `TRITON_INTEL_ENABLE_BLOCK_IO_ALL_LAYOUTS=1`" in render_markdown(r)
    assert json.loads(r.model_dump_json())["worker_environment"] == {"TRITON_INTEL_ENABLE_BLOCK_IO_ALL_LAYOUTS": "1"}


def test_no_line_when_the_device_set_nothing():
    assert "worker environment" not in render_markdown(RunReport(run_id="x", status="improved", kernel="/k.py"))
