"""The stages YAML is the one definition of the stages: names, order, issue kinds, recipes, the graph's nodes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from xe_forge.errors import InputError
from xe_forge.paths import data_dir
from xe_forge.pipeline.analyze import analyze_source
from xe_forge.pipeline.graph import build_graph
from xe_forge.stages import (
    StageSpec,
    load_stages,
    parse_stage_list,
    stage_for_issue,
    stage_names,
    standalone_stage,
)

EXAMPLE_12 = Path(__file__).parents[1] / "examples" / "12_Gemm_Multiply_LeakyReLU" / "kernel.py"


def test_stage_names_are_the_yaml_files_in_order():
    files = {p.stem for p in data_dir("stages").glob("*.yaml")}
    assert set(stage_names()) == files
    orders = [load_stages()[n].order for n in stage_names()]
    assert orders == sorted(orders)


def test_a_new_yaml_file_is_a_new_stage(tmp_path: Path):
    shutil.copytree(data_dir("stages"), tmp_path / "stages")
    spec = yaml.safe_load((tmp_path / "stages" / "dtype.yaml").read_text())
    spec.update(name="vectorize", order=10, issue_kinds=["scalar-loads"], recipes=[])
    (tmp_path / "stages" / "vectorize.yaml").write_text(yaml.safe_dump(spec))
    stages = load_stages(tmp_path / "stages")
    assert list(stages)[-1] == "vectorize" and len(stages) == len(stage_names()) + 1


def test_a_stage_file_must_carry_its_own_name(tmp_path: Path):
    (tmp_path / "dtype.yaml").write_text(yaml.safe_dump({"name": "types", "order": 1, "summary": "s", "goal": "g"}))
    with pytest.raises(ValueError, match="must match the file name"):
        load_stages(tmp_path)


def test_a_stage_may_only_name_known_recipes():
    with pytest.raises(ValidationError, match="recipes"):
        StageSpec(name="x", order=1, summary="s", goal="g", recipes=["no-such-recipe"])


def test_a_stage_may_only_name_known_candidate_sources():
    with pytest.raises(ValidationError, match="sources"):
        StageSpec(name="x", order=1, summary="s", goal="g", sources=["no-such-source"])
    assert StageSpec(name="x", order=1, summary="s", goal="g", sources=["lower"]).sources == ["lower"]


def test_each_issue_kind_belongs_to_one_stage_and_unknown_kinds_go_to_the_open_ended_one():
    listed = [(k, s.name) for s in load_stages().values() for k in s.issue_kinds]
    assert len({k for k, _ in listed}) == len(listed), "an issue kind is listed by two stages"
    assert all(stage_for_issue(k) == name for k, name in listed)
    (open_ended,) = [s.name for s in load_stages().values() if s.open_ended]
    assert stage_for_issue("never-heard-of-it") == open_ended


def test_the_static_analysis_only_finds_kinds_the_yaml_lists():
    issues = analyze_source(EXAMPLE_12.read_text())
    assert issues
    for issue in issues:
        assert issue.kind in load_stages()[issue.stage].issue_kinds, issue


def test_stage_list_is_checked_against_the_yaml():
    assert parse_stage_list("dtype, fusion") == ["dtype", "fusion"]
    with pytest.raises(InputError, match="unknown stage"):
        parse_stage_list("dtype,warp_magic")


def test_the_graph_has_one_node_per_stage():
    nodes = set(build_graph().get_graph().nodes)
    assert {f"stage_{n}" for n in stage_names()} <= nodes


def test_the_port_is_a_standalone_stage_outside_the_pipeline():
    port = standalone_stage("port")
    assert port.accept == "correct" and port.prompt == "port.j2"
    assert "port" not in stage_names()
