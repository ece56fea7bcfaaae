"""Output that is not a terminal is never wrapped, even where COLUMNS says 80 (CI runners and
pytest-xdist's workers export it): a wrapped table row or path cannot be read back or copied."""

from __future__ import annotations

import io

from rich.table import Table

from xe_forge.terminal import ForgeConsole


def test_a_pipe_gets_whole_rows_whatever_columns_says(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    table = Table("id", "title")
    table.add_row("xpu-stream-k-gemm", "Stream-K for GEMMs whose tile count does not divide the core count " * 2)
    ForgeConsole(file=out).print(table)
    rows = [line for line in out.getvalue().splitlines() if "xpu-stream-k-gemm" in line]
    assert len(rows) == 1 and "core count Stream-K" in rows[0], out.getvalue()


def test_an_asked_width_is_kept(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert ForgeConsole(file=io.StringIO(), width=40).size.width == 40
