"""The launch-option table: which options a target accepts with which toolchain version.

One table serves the verifier's static pass, the devices' option validation and the rules proposer:
its rows are the knowledge base's constraint entries whose check reads launch options (allowed
values, powers of two, maxima, forbidden combinations, and the keywords each backend version
defines). Each row carries its targets and toolchain range, its source and the id every rejection
names, so a wrong-version option (`advanced_path` on triton-xpu 3.6, `split_barriers_scope` on 3.7)
is refused before anything compiles, with the entry that says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from xe_forge.kb.loader import bundled_kb, target_admits
from xe_forge.kb.schema import (
    OPTION_CHECKS,
    Check,
    Entry,
    ForbidComboCheck,
    LaunchKeywordsCheck,
    MaxValueCheck,
    OptionValuesCheck,
    PowerOfTwoCheck,
)
from xe_forge.toolchain import OptionProblem, Toolchain


@dataclass(frozen=True)
class Failure:
    """Why a set of options breaks one check; `option` is the one to drop to repair it."""

    option: str
    reason: str


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def option_failures(check: Check, options: dict[str, Any], keywords: Iterable[str] = ()) -> list[Failure]:
    """Every way one set of options breaks an option check (empty: it does not).

    Args:
        check: a constraint's check; call and non-option checks never fail here.
        options: option name -> literal value, as given at one launch or one triton.Config.
        keywords: every launch keyword the table knows (for launch_keywords checks).
    """
    if isinstance(check, OptionValuesCheck):
        if check.option in options and str(options[check.option]) not in {str(v) for v in check.allowed}:
            legal = ", ".join(repr(v) for v in check.allowed) or "none: the option is not accepted"
            return [Failure(check.option, f"{check.option}={options[check.option]!r} is not allowed (allowed: {legal})")]
    elif isinstance(check, PowerOfTwoCheck):
        value = options.get(check.option)
        whole = isinstance(value, int) and not isinstance(value, bool)
        if check.option in options and not (whole and value >= 1 and value & (value - 1) == 0):
            return [Failure(check.option, f"{check.option}={options[check.option]!r} is not a power of two")]
    elif isinstance(check, MaxValueCheck):
        value = _number(options.get(check.option))
        if value is not None and value > check.max:
            return [Failure(check.option, f"{check.option}={options[check.option]!r} exceeds the maximum {check.max:g}")]
    elif isinstance(check, ForbidComboCheck):
        if all(c.option in options and c.holds(options[c.option]) for c in check.when):
            given = ", ".join(f"{c.option}={options[c.option]!r}" for c in check.when)
            rule = " together with ".join(c.describe() for c in check.when)
            return [Failure(check.when[0].option, f"{given} is forbidden ({rule})")]
    elif isinstance(check, LaunchKeywordsCheck):
        known, defined = set(keywords), set(check.defined)
        return [Failure(name, f"{name}={options[name]!r}: keyword argument {name} is not an option of this "
                              "backend version (KeyError 'Keyword argument ... was specified but unrecognised')")
                for name in options if name in known and name not in defined]
    return []


class OptionTable:
    """The option rows of a knowledge base, asked per target and installed toolchain."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.rows = [e for e in entries if e.constraint and isinstance(e.constraint.check, OPTION_CHECKS)]
        self.keywords = frozenset(name for row in self.rows if isinstance(row.constraint.check, LaunchKeywordsCheck)
                                  for name in row.constraint.check.defined)

    def rows_for(self, target: str, toolchain: Toolchain) -> list[Entry]:
        return [r for r in self.rows if target_admits(target, r.targets) and toolchain.satisfies(r.toolchain)]

    def problems(self, options: dict[str, Any], target: str, toolchain: Toolchain, *,
                 parameters: Iterable[str] = ()) -> list[OptionProblem]:
        """Every reason `target` with `toolchain` rejects these options, each naming its entry.

        Args:
            parameters: kernel parameter names at this site; never judged as launch keywords.

        An option that a specific row rejects (e.g. threads_per_warp on 3.6, with advice) is not also
        reported by the keyword list of that version.
        """
        keywords = self.keywords - set(parameters)
        specific: list[OptionProblem] = []
        unknown: list[OptionProblem] = []
        for row in self.rows_for(target, toolchain):
            check = row.constraint.check
            for failure in option_failures(check, options, keywords):
                problem = OptionProblem(option=failure.option, value=options.get(failure.option), entry_id=row.id,
                                        message=f"[{row.id}] {failure.reason}: {row.constraint.rule}")
                (unknown if isinstance(check, LaunchKeywordsCheck) else specific).append(problem)
        named = {p.option for p in specific}
        return specific + [p for p in unknown if p.option not in named]

    def allowed_values(self, option: str, target: str, toolchain: Toolchain) -> list[Any] | None:
        """The values the rows allow for `option` here (None: no row lists them)."""
        lists = [r.constraint.check.allowed for r in self.rows_for(target, toolchain)
                 if isinstance(r.constraint.check, OptionValuesCheck) and r.constraint.check.option == option]
        if not lists:
            return None
        return [v for v in lists[0] if all(str(v) in {str(x) for x in other} for other in lists[1:])]


@lru_cache(maxsize=1)
def bundled_table() -> OptionTable:
    """The table of the bundled knowledge base (read once per process)."""
    return OptionTable(bundled_kb().entries)
