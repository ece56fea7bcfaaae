"""The bundled content: coverage of stages, targets, transforms and problem classes; legal configs."""

from __future__ import annotations

import pytest

from xe_forge.kb import PROBLEM_CLASSES, RECIPE_NAMES, bundled_dir
from xe_forge.kb.schema import CONFIG_KEYWORDS
from xe_forge.stages import stage_names
from xe_forge.targets.base import TARGETS, Toolchain

INTEL_SPACES = ("xe2-config-space", "xe-hpc-config-space")


def test_at_least_sixty_entries_with_sources(bundled):
    assert len(bundled) >= 60
    assert all(e.source.strip() for e in bundled.entries)


def test_every_stage_and_target_is_covered(bundled):
    assert {s for e in bundled.entries for s in e.stages} == set(stage_names())
    assert {t for e in bundled.entries for t in e.targets} == set(TARGETS)


def test_every_recipe_transform_has_a_recipe_and_nvidia_has_recipes(bundled):
    recipes = bundled.filter(kind="recipe")
    assert {e.recipe.name for e in recipes} == set(RECIPE_NAMES)
    assert {e.recipe.name for e in recipes if "nvidia-sm90" in e.targets} >= {
        "launch-options", "tile-sizes", "autotune", "group-swizzle", "exp2-activations", "drop-dot-upcast"}


def test_config_spaces_cover_all_problem_classes(bundled):
    for space_id in (*INTEL_SPACES, "sm90-config-space"):
        entry = bundled.get(space_id)
        assert entry is not None and set(entry.config_space) == set(PROBLEM_CLASSES), space_id


def test_intel_configs_are_legal_for_their_toolchain(bundled):
    for space_id in INTEL_SPACES:
        entry = bundled.get(space_id)
        assert entry.toolchain == "triton-xpu>=3.6"
        for configs in entry.config_space.values():
            for config in configs:
                assert config.get("grf_mode", "default") in ("default", "128", "256", "auto")
                if config.get("grf_mode") == "256":
                    assert config["num_warps"] <= 32
                assert "num_stages" in config  # triton.Config defaults to 3, a launch to 2


def test_nvidia_configs_carry_no_intel_options(bundled):
    for configs in bundled.get("sm90-config-space").config_space.values():
        for config in configs:
            assert not {"grf_mode", "warp_size", "threads_per_warp"} & set(config)
            assert config["num_warps"] <= 32 and config["num_warps"] % 4 == 0 or "BLOCK_K" not in config


def test_config_keywords_are_triton_config_keywords():
    import triton

    for keyword in CONFIG_KEYWORDS:
        triton.Config({}, **{keyword: 4 if keyword != "maxnreg" else 128})


def test_grf_names_are_version_ranged_without_overlap(bundled):
    names = [e for e in bundled.entries if e.id.startswith("xpu-grf-mode-names-")]
    assert {e.toolchain for e in names} == {"triton-xpu<3.6", "triton-xpu>=3.6,<3.7.2", "triton-xpu>=3.7.2"}


def test_unverified_facts_are_low_confidence(bundled):
    for entry in bundled.entries:
        if "UNVERIFIED" in entry.source:
            assert entry.confidence == "low", entry.id


@pytest.mark.parametrize(("key", "target", "value"), [
    ("xe_hpc.roofline_crossover_flop_per_byte", "intel-xe-hpc", 256),
    ("xe2.slm_per_xecore_kb", "intel-xe2", 256),
    ("xe_hpg.sub_group_sizes", "intel-xe-hpg", [8, 16, 32]),
    ("xe_hpg.max_sub_groups_per_work_group", "intel-xe-hpg", 128),
    ("xe2.sub_group_sizes", "intel-xe2", [16, 32]),
    ("triton_xpu.min_dot_k_8bit", "intel-xe2", 32),
    ("xpu.large_grf_max_work_group_size_simd16", "intel-xe-hpc", 512),
    ("h200.bf16_gemm_tflops_measured", "nvidia-sm90", 790),
])
def test_audited_facts(bundled, key, target, value):
    assert bundled.fact(key, target) == value


@pytest.mark.parametrize(("version", "names"), [("3.5.0", ["default", "small", "large", "auto"]),
                                                ("3.7.2", ["default", "128", "256", "512", "auto"])])
def test_version_ranged_facts_are_read_per_toolchain(bundled, version, names):
    toolchain = Toolchain(name="triton-xpu", version=version)
    assert bundled.fact("triton_xpu.grf_mode_names", "intel-xe2", toolchain) == names


def test_corrected_version_facts(bundled):
    arch = bundled.get("xpu-b70-arch-recognition")
    assert arch.toolchain == "triton-xpu<3.7.1" and "device architecture not recognized" in arch.summary
    assert bundled.get("xpu-tensor-descriptors-for-dot").toolchain == "triton-xpu>=3.4"
    assert "silently" in bundled.get("xpu-grf-mode-names-pre-3-6").constraint.rule
    assert {"fp8", "u8"} <= set(bundled.get("xpu-dpas-dtype-pairs").constraint.rule.replace(",", " ").split())


def _audit_rows() -> list[list[str]]:
    text = (bundled_dir() / "README.md").read_text(encoding="utf-8")
    table = text.split("## Audit", 1)[1]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()
            if line.startswith("| ") and not line.startswith("| entry")]


def test_the_readme_audit_table_matches_the_entries(bundled):
    rows = _audit_rows()
    assert len(rows) >= 20
    for entry_id, _, _, verified_on in rows:
        entry = bundled.get(entry_id)
        assert entry is not None, entry_id
        assert entry.verified_on == verified_on, entry_id


def test_every_fact_is_sourced_to_something_openable(bundled):
    for entry in bundled.entries:
        if entry.facts:
            assert entry.verified_on is not None and ("https://" in entry.source or "benchmarks/" in entry.source)


@pytest.mark.parametrize(("key", "version", "value"), [
    ("triton_xpu.block_io_all_layouts_default", "3.5.0", False),
    ("triton_xpu.block_io_all_layouts_default", "3.7.0", False),
    ("triton_xpu.block_io_all_layouts_default", "3.7.1", True),
    ("triton_xpu.block_io_all_layouts_default", "3.4.0", None),
    ("triton_xpu.default_grf_retry_checks_num_warps", "3.8.0", False),
    ("triton_xpu.default_grf_retry_checks_num_warps", "3.9.0", None),
])
def test_second_audit_version_facts(bundled, key, version, value):
    assert bundled.fact(key, "intel-xe2", Toolchain(name="triton-xpu", version=version)) is value


@pytest.mark.parametrize(("key", "target", "value"), [
    ("xe_hpc.last_level_cache_mb_per_stack", "intel-xe-hpc", 192),
    ("xpu.threads_per_xve_small_grf", "intel-xe2", 8),
    ("xpu.threads_per_xve_large_grf", "intel-xe-hpc", 4),
    ("triton.descriptor_min_block_last_dim_bytes", "nvidia-sm90", 16),
    ("arl_h.min_sub_group_size", "intel-xe-hpg", 8),
])
def test_second_audit_facts(bundled, key, target, value):
    assert bundled.fact(key, target) == value


def test_second_audit_corrections(bundled):
    spill = bundled.get("xpu-grf-default-recompiles-on-spill").summary
    assert "whatever num_warps" in bundled.get("xpu-grf-default-recompiles-on-spill").title and "make_zebin" in spill
    tdesc = bundled.get("xpu-tensor-descriptors-for-dot").summary
    assert "Up to 3.7.0" in tdesc and "From 3.7.1" in tdesc
    assert bundled.get("xpu-block-io-gates").toolchain == "triton-xpu>=3.7.1"
    assert bundled.get("xpu-block-io-gates-block-pointers").toolchain == "triton-xpu>=3.6,<3.7.1"
    assert "max(2, ceil(32 / bits))" in bundled.get("xpu-block-io-gates").summary
    assert "MainloopXeL1Staged" in bundled.get("xe2-sycl-tla-gemm-tiles").summary


def test_no_entry_cites_a_note_outside_the_repository(bundled):
    for entry in bundled.entries:
        assert "facts.md" not in entry.source and "DESIGN.md" not in entry.source, entry.id
