"""`validate_paths`: every class of problem, each reported with its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from xe_forge.kb import bundled_dir, validate_paths
from xe_forge.kb.consistency import toolchains_overlap

from .helpers import make_entry, write_entries

HEADER = """\
entries:
  - id: good-entry
    kind: constraint
    title: A fine entry
    stages: [dtype]
    targets: [any]
    source: tests/kb/test_validate.py
    confidence: high
    summary: fine
    constraint: {rule: r}
"""


def _write(tmp_path: Path, body: str, name: str = "kb.yaml") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def _one(problems, needle):
    found = [p for p in problems if needle in p.message]
    assert len(found) == 1, (needle, [str(p) for p in problems])
    return found[0]


def _sourced(entry_id: str, **lines: str | None) -> str:
    """An entry with provenance (`verified_on`), so only the problem under test is reported."""
    return _entry_text(entry_id, **{"verified_on": '"source only"', **lines})


def _entry_text(entry_id: str, **lines: str | None) -> str:
    """One entry as YAML text, one field per line in this order (None drops a field)."""
    fields: dict[str, str | None] = {"kind": "constraint", "title": "T", "stages": "[dtype]", "targets": "[any]",
                                     "source": "tests/kb/test_validate.py", "confidence": "high", "summary": "s",
                                     "constraint": "{rule: r}"}
    fields.update(lines)
    body = "\n".join(f"    {k}: {v}" for k, v in fields.items() if v is not None)
    return f"  - id: {entry_id}\n{body}\n"


def test_bundled_kb_has_no_problems():
    assert [str(p) for p in validate_paths([bundled_dir()])] == []


def test_yaml_syntax_error_has_its_line(tmp_path: Path):
    path = _write(tmp_path, "  - id: [unclosed\n")
    problem = _one(validate_paths([path]), "YAML syntax error")
    assert problem.file == path and problem.line >= 11


def test_missing_entries_key(tmp_path: Path):
    path = tmp_path / "kb.yaml"
    path.write_text("items: []\n", encoding="utf-8")
    problems = validate_paths([path])
    assert _one(problems, "unknown top-level key 'items'").line == 1
    assert _one(problems, "missing top-level 'entries:'").file == path


def test_unknown_stage_is_reported_at_the_stages_line(tmp_path: Path):
    path = _write(tmp_path, _entry_text("bad-stage", stages="[dtype, tuning]"))
    problem = _one(validate_paths([path]), "unknown stage 'tuning'")
    assert (problem.file, problem.line) == (path, 14)  # entry starts on line 11; stages is its 4th line
    assert "entry 'bad-stage'" in problem.message


def test_unknown_target_is_reported_at_the_targets_line(tmp_path: Path):
    path = _write(tmp_path, _entry_text("bad-target", targets="[intel-xe9]"))
    assert _one(validate_paths([path]), "unknown target 'intel-xe9'").line == 15


def test_bad_toolchain_specifier(tmp_path: Path):
    path = _write(tmp_path, _entry_text("bad-range", toolchain='"triton-xpu=>3.6"'))
    assert _one(validate_paths([path]), "invalid version specifier").line == 20


def test_schema_error_in_a_nested_field(tmp_path: Path):
    path = _write(tmp_path, _entry_text("bad-check", constraint="\n      rule: r\n      check: {kind: max_value, option: num_warps}"))
    problem = _one(validate_paths([path]), "max")
    assert problem.line == 21  # the line of `check:` (constraint: is on 19, rule: on 20)


def test_unknown_field(tmp_path: Path):
    path = _write(tmp_path, _entry_text("extra-field", severity="high"))
    assert _one(validate_paths([path]), "severity").line == 20


def test_duplicate_key_in_an_entry(tmp_path: Path):
    path = _write(tmp_path, _entry_text("dup-key") + "    title: again\n")
    assert _one(validate_paths([path]), "key 'title' given twice").line == 20


def test_duplicate_id_in_one_file_and_across_files(tmp_path: Path):
    path = _write(tmp_path, _entry_text("good-entry"))
    problem = _one(validate_paths([path]), "duplicate id 'good-entry'")
    assert (problem.file, problem.line) == (path, 11) and f"{path}:2" in problem.message
    other = write_entries(tmp_path / "other" / "b.yaml", make_entry("good-entry"))
    problems = validate_paths([tmp_path / "kb.yaml", other.parent])
    assert any("duplicate id 'good-entry'" in p.message and p.file == other for p in problems)


def test_example_that_is_missing_or_does_not_import(tmp_path: Path):
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "broken.py").write_text("import not_a_module_xyz\n", encoding="utf-8")
    (tmp_path / "examples" / "partial.py").write_text("class Model: pass\n", encoding="utf-8")
    body = "".join(_entry_text(name, kind="example", constraint=None,
                               example=f"{{path: examples/{name}.py, teaches: t}}")
                   for name in ("broken", "partial", "absent"))
    path = _write(tmp_path, body)
    problems = validate_paths([path])
    assert _one(problems, "example examples/broken.py does not import").line == 11
    assert "not_a_module_xyz" in _one(problems, "broken.py").message
    assert "does not define get_inputs, get_init_inputs" in _one(problems, "partial.py").message
    assert _one(problems, "examples/absent.py not found").line == 29


def test_overlapping_option_values_constraints_contradict(tmp_path: Path):
    check_a = {"kind": "option_values", "option": "grf_mode", "allowed": ["default", "128", "256"]}
    check_b = {"kind": "option_values", "option": "grf_mode", "allowed": ["default", "small", "large"]}
    path = write_entries(tmp_path / "kb.yaml",
                         make_entry("names-new", toolchain="triton-xpu>=3.6", constraint={"rule": "r", "check": check_a}),
                         make_entry("names-old", toolchain="triton-xpu<3.7", constraint={"rule": "r", "check": check_b}))
    problem = _one(validate_paths([path]), "contradiction")
    assert "names-new" in problem.message and "names-old" in problem.message and problem.line > 1


def test_disjoint_toolchain_ranges_do_not_contradict(tmp_path: Path):
    check_a = {"kind": "option_values", "option": "grf_mode", "allowed": ["128", "256"]}
    check_b = {"kind": "option_values", "option": "grf_mode", "allowed": ["small", "large"]}
    path = write_entries(tmp_path / "kb.yaml",
                         make_entry("names-new", toolchain="triton-xpu>=3.6", constraint={"rule": "r", "check": check_a}),
                         make_entry("names-old", toolchain="triton-xpu<3.6", constraint={"rule": "r", "check": check_b}),
                         make_entry("other-target", targets=["nvidia-sm90"], constraint={"rule": "r", "check": check_b}))
    assert validate_paths([path]) == []


def test_config_forbidden_by_a_constraint_is_a_contradiction(tmp_path: Path, bundled):
    """The anchor's kind of self-contradiction: a config using what a rule for the same target forbids."""
    space = {"gemm": [{"BLOCK_M": 256, "grf_mode": "256", "num_warps": 64}],
             "elementwise": [{"BLOCK_SIZE": 1024, "grf_mode": "large", "num_warps": 8}]}
    path = write_entries(tmp_path / "kb.yaml", make_entry("my-space", kind="config_space", constraint=None,
                                                          stages=["autotuning"], toolchain="triton-xpu>=3.7.2",
                                                          config_space=space))
    problems = validate_paths([path], context=bundled.entries, import_check=False)
    assert _one(problems, "gemm[0] breaks constraint 'xpu-grf-large-max-32-warps'").file == path
    assert _one(problems, "elementwise[0] breaks constraint 'xpu-grf-mode-names-3-7-2'").line == 2


def test_unranged_intel_space_with_grf_names_contradicts_the_old_names(tmp_path: Path, bundled):
    space = {"gemm": [{"BLOCK_M": 128, "grf_mode": "256", "num_warps": 32}]}
    path = write_entries(tmp_path / "kb.yaml", make_entry("unranged", kind="config_space", constraint=None,
                                                          config_space=space))
    problems = validate_paths([path], context=bundled.entries, import_check=False)
    assert _one(problems, "xpu-grf-mode-names-pre-3-6")


def test_launch_options_recipe_is_checked_like_a_config(tmp_path: Path, bundled):
    recipe = {"name": "launch-options", "params": {"num_warps": 12}, "expected_effect": "x"}
    path = write_entries(tmp_path / "kb.yaml", make_entry("odd-warps", kind="recipe", constraint=None, recipe=recipe))
    problems = validate_paths([path], context=bundled.entries, import_check=False)
    assert _one(problems, "num-warps-power-of-two")


def test_autotune_recipe_needs_a_config_space(tmp_path: Path):
    recipe = {"name": "autotune", "params": {"config_space": "nowhere"}, "expected_effect": "x"}
    path = write_entries(tmp_path / "kb.yaml", make_entry("lonely", kind="recipe", constraint=None,
                                                          targets=["intel-xe-hpg"], recipe=recipe))
    problems = validate_paths([path])
    assert _one(problems, "no config_space entry covers")
    assert _one(problems, "names config_space 'nowhere'")


def test_missing_path(tmp_path: Path):
    assert _one(validate_paths([tmp_path / "none.yaml"]), "no such file").line == 0


def test_toolchain_overlap():
    assert toolchains_overlap("triton-xpu>=3.6", "triton-xpu<3.7")
    assert not toolchains_overlap("triton-xpu>=3.6", "triton-xpu<3.6")
    assert not toolchains_overlap("triton-xpu>=3.6,<3.7.2", "triton-xpu>=3.7.2")
    assert not toolchains_overlap("triton>=3.9", "triton-xpu>=3.9")
    assert toolchains_overlap(None, "triton-xpu<3.6") and toolchains_overlap("triton-xpu", "triton-xpu>=9")
    assert toolchains_overlap("triton-xpu==3.6.*", "triton-xpu>3.6.1")


# provenance and facts (issue 16) ------------------------------------------------------------------

def _entries(tmp_path: Path, body: str) -> Path:
    """A file of just these entries (HEADER's entry carries no verified_on)."""
    path = tmp_path / "facts.yaml"
    path.write_text("entries:\n" + body, encoding="utf-8")
    return path


def test_constraint_without_verified_on_is_reported(tmp_path: Path):
    path = _entries(tmp_path, _entry_text("unsure-rule"))
    problem = _one(validate_paths([path]), "'unsure-rule' states a constraint but has no verified_on")
    assert problem.line == 2 and "'source only', 'interpreter', 'H200', 'Intel hardware'" in problem.message


def test_pattern_without_facts_needs_no_verified_on(tmp_path: Path):
    pattern = _entry_text("a-pattern", kind="pattern", constraint=None,
                          pattern="{before: a, after: b, rationale: c}")
    assert validate_paths([_entries(tmp_path, pattern)], import_check=False) == []


def test_a_fact_needs_a_source_with_a_url(tmp_path: Path):
    cited = _sourced("other-entry") + _sourced("fact-entry", source="other-entry",
                                                 facts="[{key: xe2.slm_per_xecore_kb, value: 256}]")
    assert "no URL" in _one(validate_paths([_entries(tmp_path, cited)], import_check=False), "fact-entry").message
    opened = _sourced("fact-entry", facts="[{key: xe2.slm_per_xecore_kb, value: 256}]",
                         source='"https://example.org/IntelGpuXe2.h#L10"')
    assert validate_paths([_entries(tmp_path, opened)], import_check=False) == []


@pytest.mark.parametrize("source", ['"xpu-facts.md (IXB 3.6 gates)"', '"our notes"', '"DESIGN.md"',
                                    '"https://example.org/x ; cuda-and-interpreter-facts.md"',
                                    '"benchmarks/NO_SUCH_FILE.md"', '"file:///no/such/run/report.json"'])
def test_a_source_nobody_can_open_fails_validation(tmp_path: Path, source: str):
    body = _entry_text("unopenable", kind="pattern", constraint=None, source=source,
                       pattern="{before: a, after: b, rationale: c}")
    problem = _one(validate_paths([_entries(tmp_path, body)], import_check=False), "'unopenable' source")
    assert problem.line == 2


@pytest.mark.parametrize("source", ['"https://github.com/o/r/blob/v1/f.cpp#L3"', '"benchmarks/RESULTS.md"',
                                    '"the dtype stage (stages/dtype.yaml)"', '"other-entry"'])
def test_urls_repository_files_and_entry_ids_are_openable(tmp_path: Path, source: str):
    body = _sourced("other-entry") + _entry_text("cites", kind="pattern", constraint=None, source=source,
                                                 pattern="{before: a, after: b, rationale: c}")
    assert validate_paths([_entries(tmp_path, body)], import_check=False) == []


def test_an_entry_id_of_the_bundled_kb_is_openable_for_a_user_layer(tmp_path: Path, bundled):
    body = _entry_text("mine", kind="pattern", constraint=None, source="xpu-block-io-gates",
                       pattern="{before: a, after: b, rationale: c}")
    path = _entries(tmp_path, body)
    assert validate_paths([path], context=bundled.entries, import_check=False) == []
    assert validate_paths([path], import_check=False) != []


def test_a_local_run_record_is_openable_by_file_url(tmp_path: Path):
    record = tmp_path / "report.json"
    record.write_text("{}")
    body = _entry_text("distilled", kind="pattern", constraint=None, source=f'"run x: {record.as_uri()}"',
                       pattern="{before: a, after: b, rationale: c}")
    assert validate_paths([_entries(tmp_path, body)], import_check=False) == []


def test_verified_on_takes_only_the_known_kinds(tmp_path: Path):
    problems = validate_paths([_entries(tmp_path, _sourced("vague", verified_on='"a colleague"'))])
    assert any("verified_on" in p.message for p in problems)


def test_two_entries_giving_one_fact_different_values_contradict(tmp_path: Path):
    url = '"https://example.org/src"'
    first = _sourced("slm-a", targets="[intel-xe2]", source=url, facts="[{key: xe2.slm_per_xecore_kb, value: 256}]")
    second = _sourced("slm-b", targets="[intel-xe2, intel-xe-hpc]", source=url,
                         facts="[{key: xe2.slm_per_xecore_kb, value: 128}]")
    problem = _one(validate_paths([_entries(tmp_path, first + second)]), "fact xe2.slm_per_xecore_kb")
    assert "'slm-b'" in problem.message and "'slm-a'" in problem.message


def test_one_fact_may_differ_where_entries_never_apply_together(tmp_path: Path):
    url = '"https://example.org/src"'
    old = _sourced("grf-old", targets="[intel-xe2]", toolchain='"triton-xpu<3.6"', source=url,
                      facts='[{key: triton_xpu.grf_mode_names, value: [small, large]}]')
    new = _sourced("grf-new", targets="[intel-xe2]", toolchain='"triton-xpu>=3.6"', source=url,
                      facts='[{key: triton_xpu.grf_mode_names, value: ["128", "256"]}]')
    assert validate_paths([_entries(tmp_path, old + new)], import_check=False) == []


def test_a_user_fact_contradicting_the_bundled_kb_is_reported(tmp_path: Path, bundled):
    body = _sourced("my-slm", targets="[intel-xe2]", source='"https://example.org/x"',
                       facts="[{key: xe2.slm_per_xecore_kb, value: 128}]")
    problems = validate_paths([_entries(tmp_path, body)], context=bundled.entries, import_check=False)
    assert "xpu-slm-per-work-group" in _one(problems, "fact xe2.slm_per_xecore_kb").message


def test_fact_keys_are_dotted(tmp_path: Path):
    body = _sourced("bad-key", source='"https://x.org"', facts="[{key: SLM, value: 1}]")
    assert any("fact key 'SLM'" in p.message for p in validate_paths([_entries(tmp_path, body)]))
