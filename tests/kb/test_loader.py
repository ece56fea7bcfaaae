"""Layering: bundled, then XE_FORGE_KB_PATH (or ~/.xe-forge/kb), then --kb dirs; later wins by id."""

from __future__ import annotations

from pathlib import Path

import pytest

from xe_forge.errors import InputError
from xe_forge.kb import load_kb
from xe_forge.kb.loader import DEFAULT_USER_DIR, default_user_dir, target_admits, user_dirs

from .helpers import XPU_35, XPU_372, make_entry, write_entries


def test_bundled_kb_loads(bundled):
    kb = load_kb()
    assert len(kb) == len(bundled) >= 60
    assert kb.get("xpu-grf-mode-names-3-6") is not None


def test_user_layer_overrides_bundled_entry_by_id(user_kb_dir: Path):
    write_entries(user_kb_dir / "mine.yaml", make_entry("xpu-grf-mode-names-3-6", title="My override"),
                  make_entry("my-new-entry"))
    kb = load_kb()
    assert kb.get("xpu-grf-mode-names-3-6").title == "My override"
    assert kb.get("my-new-entry") is not None
    assert kb.get("xpu-grf-mode-names-3-6").file == user_kb_dir / "mine.yaml"


def test_extra_dirs_come_last(user_kb_dir: Path, tmp_path: Path):
    write_entries(user_kb_dir / "a.yaml", make_entry("shared-id", title="from env"))
    extra = tmp_path / "extra"
    write_entries(extra / "b.yaml", make_entry("shared-id", title="from --kb"))
    assert load_kb([extra]).get("shared-id").title == "from --kb"
    assert load_kb().get("shared-id").title == "from env"


def test_env_path_holds_several_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    first, second = tmp_path / "one", tmp_path / "two"
    write_entries(first / "a.yaml", make_entry("layered", title="first"))
    write_entries(second / "a.yaml", make_entry("layered", title="second"))
    monkeypatch.setenv("XE_FORGE_KB_PATH", f"{first}{__import__('os').pathsep}{second}")
    assert load_kb().get("layered").title == "second"
    assert default_user_dir() == first


def test_default_user_dir_without_env(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("XE_FORGE_KB_PATH")
    assert user_dirs() == [DEFAULT_USER_DIR.expanduser()]


def test_missing_extra_dir_is_an_input_error(tmp_path: Path):
    with pytest.raises(InputError, match="does not exist"):
        load_kb([tmp_path / "nope"])


def test_broken_user_layer_is_an_input_error_naming_file_and_line(user_kb_dir: Path):
    write_entries(user_kb_dir / "bad.yaml", make_entry("dup"), make_entry("dup"))
    with pytest.raises(InputError) as err:
        load_kb()
    assert "bad.yaml" in str(err.value) and "duplicate id 'dup'" in str(err.value)
    assert err.value.exit_code == 2


@pytest.mark.parametrize("wanted, targets, admitted", [
    ("intel-xe2", ["intel-xe2"], True), ("intel-xe2", ["any"], True), ("intel-xe2", ["intel-xe-hpc"], False),
    ("nvidia-sm90", ["nvidia-any"], True), ("nvidia-sm90", ["any"], True), ("intel-xe2", ["nvidia-any"], False),
])
def test_target_admits(wanted, targets, admitted):
    assert target_admits(wanted, targets) is admitted


def test_filter_by_stage_target_kind_and_toolchain(bundled):
    xe2 = bundled.filter(stage="device_tuning", target="intel-xe2", kind="constraint", toolchain=XPU_372)
    ids = {e.id for e in xe2}
    assert "xpu-grf-mode-names-3-7-2" in ids and "num-warps-power-of-two" in ids
    assert "xpu-grf-mode-names-pre-3-6" not in ids and "nvidia-num-warps-max-32" not in ids
    old = {e.id for e in bundled.filter(target="intel-xe2", toolchain=XPU_35)}
    assert "xpu-grf-mode-names-pre-3-6" in old and "xpu-grf-mode-names-3-6" not in old
    assert all(e.kind == "config_space" for e in bundled.filter(kind="config_space"))
