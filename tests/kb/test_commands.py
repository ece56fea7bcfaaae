"""`xe-forge kb ...` through Typer's CliRunner: exit codes and output."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from xe_forge.cli.kb import kb_app, parse_toolchain
from xe_forge.kb import add_entry_file, load_kb

from .helpers import make_entry, write_entries

runner = CliRunner()


def test_list_filters_by_stage_target_and_kind():
    result = runner.invoke(kb_app, ["list", "--stage", "autotuning", "--target", "nvidia-sm90", "--kind", "config_space"])
    assert result.exit_code == 0, result.output
    assert "sm90-config-space" in result.output and "xe2-config-space" not in result.output
    assert "1 entries" in result.output


def test_list_rejects_an_unknown_stage():
    result = runner.invoke(kb_app, ["list", "--stage", "tuning"])
    assert result.exit_code == 2 and "unknown stage 'tuning'" in result.output


def test_show_prints_the_entry_and_its_location():
    result = runner.invoke(kb_app, ["show", "xpu-grf-large-max-32-warps"])
    assert result.exit_code == 0, result.output
    assert "256-register GRF mode allows at most 32 warps" in result.output
    assert "intel-launch-options.yaml" in result.output


def test_show_unknown_id_exits_2():
    result = runner.invoke(kb_app, ["show", "no-such-entry"])
    assert result.exit_code == 2 and "no entry with id 'no-such-entry'" in result.output


def test_search_ranks_and_full_prints_whole_entries():
    result = runner.invoke(kb_app, ["search", "grf_mode names", "--stage", "device_tuning", "--target", "intel-xe2",
                                    "--toolchain", "triton-xpu==3.5.0"])
    assert result.exit_code == 0, result.output
    assert "xpu-grf-mode-names-pre-3-6" in result.output and "xpu-grf-mode-names-3-6 " not in result.output
    full = runner.invoke(kb_app, ["search", "exp2 sigmoid", "--full", "--budget", "600"])
    assert full.exit_code == 0 and "### " in full.output


def _rows(output: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")[1:-1]] for line in output.splitlines() if line.startswith("│")]


def test_search_shows_ten_matches_by_default_and_never_a_zero_score():
    result = runner.invoke(kb_app, ["search", "tile"])
    rows = _rows(result.output)
    assert result.exit_code == 0 and 0 < len(rows) <= 10, result.output
    assert all(float(r[0]) > 0 for r in rows) and "more match" in result.output
    three = _rows(runner.invoke(kb_app, ["search", "tile", "--limit", "3"]).output)
    assert three == rows[:3]
    nothing = runner.invoke(kb_app, ["search", "zzqxv"])
    assert nothing.exit_code == 0 and "no entry matches" in nothing.output and not _rows(nothing.output)


def test_parse_toolchain():
    assert str(parse_toolchain("triton-xpu==3.7.2")) == "triton-xpu 3.7.2"
    assert str(parse_toolchain("triton 3.9.0")) == "triton 3.9.0"


def test_validate_bundled_exits_0():
    result = runner.invoke(kb_app, ["validate", "--no-import"])
    assert result.exit_code == 0, result.output
    assert "no problems found" in result.output


def test_validate_reports_file_line_and_exits_1(tmp_path: Path):
    path = write_entries(tmp_path / "bad.yaml", make_entry("bad", stages=["nowhere"]))
    result = runner.invoke(kb_app, ["validate", str(path)])
    assert result.exit_code == 1
    assert f"{path}:5: entry 'bad': stages: unknown stage 'nowhere'" in result.output


def test_add_copies_into_the_user_dir_and_refuses_duplicates(tmp_path: Path, user_kb_dir: Path):
    src = write_entries(tmp_path / "new.yaml", make_entry("my-fresh-rule"))
    result = runner.invoke(kb_app, ["add", str(src)])
    assert result.exit_code == 0, result.output
    assert (user_kb_dir / "new.yaml").is_file() and load_kb().get("my-fresh-rule") is not None
    again = runner.invoke(kb_app, ["add", str(src)])
    assert again.exit_code == 2 and "already in the knowledge base" in again.output
    assert runner.invoke(kb_app, ["add", str(src), "--replace"]).exit_code == 0


def test_add_overriding_a_bundled_id_needs_replace(tmp_path: Path, user_kb_dir: Path):
    src = write_entries(tmp_path / "override.yaml", make_entry("xpu-grf-512-next-architecture",
                                                               targets=["intel-xe2"], title="Mine"))
    assert runner.invoke(kb_app, ["add", str(src)]).exit_code == 2
    assert add_entry_file(src, user_kb_dir, replace=True) == ["xpu-grf-512-next-architecture"]
    assert load_kb().get("xpu-grf-512-next-architecture").title == "Mine"


def test_add_refuses_an_invalid_file(tmp_path: Path, user_kb_dir: Path):
    src = write_entries(tmp_path / "bad.yaml", make_entry("bad-target", targets=["amd-mi300"]))
    result = runner.invoke(kb_app, ["add", str(src)])
    assert result.exit_code == 2 and "unknown target 'amd-mi300'" in result.output
    assert not (user_kb_dir / "bad.yaml").exists()


def test_add_refuses_a_contradiction_with_the_bundled_kb(tmp_path: Path, user_kb_dir: Path):
    check = {"kind": "option_values", "option": "grf_mode", "allowed": ["fast"]}
    src = write_entries(tmp_path / "c.yaml", make_entry("my-grf-names", toolchain="triton-xpu>=3.6",
                                                        constraint={"rule": "r", "check": check}))
    result = runner.invoke(kb_app, ["add", str(src), "--dir", str(tmp_path / "elsewhere")])
    assert result.exit_code == 2 and "contradiction" in result.output


def test_add_copies_example_files(tmp_path: Path):
    (tmp_path / "examples").mkdir()
    example_src = (Path(__file__).parents[2] / "knowledge_base" / "examples" / "swish_tanh_exp2.py").read_text()
    (tmp_path / "examples" / "mine.py").write_text(example_src)
    src = write_entries(tmp_path / "ex.yaml", make_entry("my-example", kind="example", constraint=None, targets=["any"],
                                                         example={"path": "examples/mine.py", "teaches": "t"}))
    dest = tmp_path / "kbdir"
    assert add_entry_file(src, dest, replace=False) == ["my-example"]
    assert (dest / "examples" / "mine.py").read_text() == example_src
