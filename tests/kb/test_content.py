"""The bundled content: coverage of stages, targets, transforms and problem classes; legal configs."""

from __future__ import annotations

from xe_forge.kb import PROBLEM_CLASSES, RECIPE_NAMES
from xe_forge.kb.schema import CONFIG_KEYWORDS
from xe_forge.stages import stage_names
from xe_forge.targets.base import TARGETS

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
