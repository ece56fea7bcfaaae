"""Finding entries that contradict each other for the same target and toolchain.

The anchor's knowledge base told the model both to put grf_mode in triton.Config and that doing so
fails, and both to force 32 warps and to avoid it. These checks catch that class of mistake here:
two option_values constraints on one option that disagree where their targets and toolchain ranges
overlap, two entries giving one fact key different values where they overlap, and a config
(config_space, or a launch-options recipe) that an applicable constraint forbids.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from xe_forge.kb.loader import target_admits
from xe_forge.kb.options import OptionTable, option_failures
from xe_forge.kb.schema import PROBLEM_CLASSES, Entry, KbProblem, OptionValuesCheck
from xe_forge.names import TARGETS
from xe_forge.toolchain import split_toolchain_spec


def targets_overlap(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether some concrete target is admitted by both target lists."""
    concrete = [t for t in TARGETS if t not in ("any", "nvidia-any")]
    a, b = list(a), list(b)
    return any(target_admits(t, a) and target_admits(t, b) for t in concrete)


def _near(version: Version) -> list[Version]:
    """Probe versions at, just above and just below a boundary of a specifier."""
    parts = list(version.release)
    probes = [version, Version(".".join(map(str, parts + [0, 1])))]
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] > 0:
            below = parts[:i] + [parts[i] - 1, 9999]
            probes.append(Version(".".join(map(str, below))))
            break
    return probes


def toolchains_overlap(a: str | None, b: str | None) -> bool:
    """Whether one toolchain (name and version) satisfies both ranges; no range admits all."""
    if a is None or b is None:
        return True
    name_a, spec_a = split_toolchain_spec(a)
    name_b, spec_b = split_toolchain_spec(b)
    if name_a != name_b:
        return False
    set_a, set_b = SpecifierSet(spec_a), SpecifierSet(spec_b)
    probes = [Version("0"), Version("9999")]
    for spec in list(set_a) + list(set_b):
        probes += _near(Version(spec.version.replace(".*", "")))
    return any(set_a.contains(v, prereleases=True) and set_b.contains(v, prereleases=True) for v in probes)


def applies_together(a: Entry, b: Entry) -> bool:
    return targets_overlap(a.targets, b.targets) and toolchains_overlap(a.toolchain, b.toolchain)


class Contradiction:
    """A contradiction and the entries involved, the one to report it at first."""

    def __init__(self, involved: list[Entry], message: str) -> None:
        self.involved, self.message = involved, message

    def at(self, entry: Entry) -> KbProblem:
        return KbProblem(file=entry.file or "<memory>", line=entry.line, message=self.message)


def conflicting_option_values(entries: list[Entry]) -> list[Contradiction]:
    """Two option_values constraints on one option, overlapping in scope, allowing different sets."""
    checks = [(e, e.constraint.check) for e in entries
              if e.constraint and isinstance(e.constraint.check, OptionValuesCheck)]
    findings: list[Contradiction] = []
    for (a, ca), (b, cb) in combinations(checks, 2):
        if ca.option != cb.option or not applies_together(a, b):
            continue
        if {str(v) for v in ca.allowed} != {str(v) for v in cb.allowed}:
            later, earlier = (b, a) if (str(b.file), b.line) >= (str(a.file), a.line) else (a, b)
            findings.append(Contradiction([later, earlier], (
                f"contradiction: '{later.id}' and '{earlier.id}' ({earlier.where}) both constrain "
                f"{ca.option} for overlapping targets and toolchains but allow different values; "
                "narrow their targets or toolchain ranges so they do not overlap")))
    return findings


def _configs(entry: Entry) -> list[tuple[str, dict]]:
    if entry.config_space:
        return [(f"{name}[{i}]", config) for name, configs in entry.config_space.items()
                for i, config in enumerate(configs)]
    if entry.recipe and entry.recipe.name == "launch-options":
        params = entry.recipe.params
        by_class = [(f"params.{name}", dict(params[name])) for name in PROBLEM_CLASSES
                    if isinstance(params.get(name), dict)]
        return by_class or [("params", dict(params))]
    return []


def forbidden_configs(entries: list[Entry]) -> list[Contradiction]:
    """A config_space config or launch-options recipe that a constraint applying to it forbids."""
    table = OptionTable(entries)
    findings: list[Contradiction] = []
    for entry in entries:
        configs = _configs(entry)
        for rule in table.rows:
            if not configs or not applies_together(entry, rule):
                continue
            for label, config in configs:
                for failure in option_failures(rule.constraint.check, config, table.keywords):
                    findings.append(Contradiction([entry, rule], (
                        f"contradiction: '{entry.id}' {label} breaks constraint '{rule.id}' ({rule.where}): "
                        f"{failure.reason}")))
    return findings


def conflicting_facts(entries: list[Entry]) -> list[Contradiction]:
    """Two entries that give one fact key different values where their targets and toolchains overlap."""
    stated = [(e, f) for e in entries for f in e.facts]
    findings: list[Contradiction] = []
    for (a, fa), (b, fb) in combinations(stated, 2):
        if fa.key != fb.key or a is b or fa.value == fb.value or not applies_together(a, b):
            continue
        later, earlier = (b, a) if (str(b.file), b.line) >= (str(a.file), a.line) else (a, b)
        mine, theirs = (fb, fa) if later is b else (fa, fb)
        findings.append(Contradiction([later, earlier], (
            f"contradiction: fact {mine.key} is {mine.value!r} in '{later.id}' but {theirs.value!r} in "
            f"'{earlier.id}' ({earlier.where}) for overlapping targets and toolchains")))
    return findings


def autotune_without_space(entries: list[Entry]) -> list[Contradiction]:
    """An autotune recipe for a target that has no config_space entry to take configs from."""
    spaces = [e for e in entries if e.kind == "config_space"]
    findings: list[Contradiction] = []
    for entry in entries:
        if entry.recipe is None or entry.recipe.name != "autotune":
            continue
        for target in entry.targets:
            if target != "any" and not any(target_admits(target, s.targets) and
                                           toolchains_overlap(entry.toolchain, s.toolchain) for s in spaces):
                findings.append(Contradiction([entry], f"autotune recipe '{entry.id}' targets {target} but no "
                                                "config_space entry covers that target and toolchain"))
    return findings


def dangling_space_references(entries: list[Entry]) -> list[Contradiction]:
    """An autotune recipe naming a config_space entry (params.config_space) that does not exist."""
    spaces = {e.id for e in entries if e.kind == "config_space"}
    findings: list[Contradiction] = []
    for entry in entries:
        named = entry.recipe.params.get("config_space") if entry.recipe else None
        if named is not None and named not in spaces:
            findings.append(Contradiction([entry], f"recipe '{entry.id}' names config_space '{named}', "
                                             "which is not a config_space entry"))
    return findings


def contradictions(entries: list[Entry]) -> list[Contradiction]:
    return (conflicting_option_values(entries) + conflicting_facts(entries) + forbidden_configs(entries)
            + autotune_without_space(entries) + dangling_space_references(entries))
