"""The knowledge-base entry schema: what a YAML entry may say, checked at the boundary.

Every entry is validated here before anything reads it, so the retrieval, the rules proposer and the
verifier's static checks can trust its fields. Unknown stages, targets and toolchain ranges are
rejected with a message that names the legal values, because a typo there silently hides an entry.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from xe_forge.names import TARGETS, RecipeName
from xe_forge.stages import stage_names
from xe_forge.toolchain import split_toolchain_spec

Kind = Literal["constraint", "pattern", "recipe", "config_space", "example"]
ProblemClass = Literal["gemm", "gemm-epilogue", "reduction", "elementwise", "attention", "conv"]
KINDS: tuple[str, ...] = get_args(Kind)
PROBLEM_CLASSES: tuple[str, ...] = get_args(ProblemClass)
RECIPE_NAMES: tuple[str, ...] = get_args(RecipeName)
# Keys of a config_space config that are triton.Config keyword arguments; every other key goes into
# the Config's kwargs dict (grf_mode included: as a Config keyword it is a TypeError).
CONFIG_KEYWORDS = ("num_warps", "num_stages", "num_ctas", "maxnreg")

Confidence = Literal["high", "medium", "low"]
# What a fact was checked against, weakest first: read in a source only, run under the Triton
# interpreter, measured on this project's H200, or observed on an Intel GPU.
VerifiedOn = Literal["source only", "interpreter", "H200", "Intel hardware"]
VERIFIED_ON: tuple[str, ...] = get_args(VerifiedOn)
OptionValue = bool | int | float | str

_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ---- machine-checkable forms of a constraint ------------------------------------------------------

class OptionValuesCheck(_Strict):
    """The option, when given, must be one of `allowed` (compared as text; empty: never allowed)."""

    kind: Literal["option_values"]
    option: str
    allowed: list[OptionValue]


class PowerOfTwoCheck(_Strict):
    """The option, when given, must be a positive integer power of two (2.0 and '8' are not)."""

    kind: Literal["power_of_two"]
    option: str


class MaxValueCheck(_Strict):
    """The option, when given as a number, must not exceed `max`."""

    kind: Literal["max_value"]
    option: str
    max: int | float


class Condition(_Strict):
    """One clause of a forbidden combination: the option is present and matches every given test."""

    option: str
    in_: list[OptionValue] | None = Field(default=None, alias="in")
    gt: int | float | None = None
    lt: int | float | None = None

    @model_validator(mode="after")
    def _has_test(self) -> Condition:
        if self.in_ is None and self.gt is None and self.lt is None:
            raise ValueError(f"condition on '{self.option}' needs at least one of 'in', 'gt', 'lt'")
        return self

    def holds(self, value: Any) -> bool:
        """Whether a present option value matches this clause (numbers compared numerically)."""
        if self.in_ is not None and str(value) not in {str(v) for v in self.in_}:
            return False
        for bound, above in ((self.gt, True), (self.lt, False)):
            if bound is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                return False
            if (value <= bound) if above else (value >= bound):
                return False
        return True

    def describe(self) -> str:
        parts = []
        if self.in_ is not None:
            parts.append(f"{self.option} in {{{', '.join(repr(v) for v in self.in_)}}}")
        if self.gt is not None:
            parts.append(f"{self.option} > {self.gt:g}")
        if self.lt is not None:
            parts.append(f"{self.option} < {self.lt:g}")
        return " and ".join(parts)


class ForbidComboCheck(_Strict):
    """Options that are legal alone but not together: every condition holding at one site is an error.

    The first clause names the option a fixer drops to make the set legal (the rules proposer does),
    so write the option that is cheaper to lose first.
    """

    kind: Literal["forbid_combo"]
    when: list[Condition] = Field(min_length=2)


class ForbidCallCheck(_Strict):
    """Calls that must not appear (e.g. tl.make_block_ptr once removed); with `keyword`, only calls
    passing that keyword (e.g. triton.Config(..., grf_mode=...))."""

    kind: Literal["forbid_call"]
    calls: list[str] = Field(min_length=1)
    keyword: str | None = None


class LaunchKeywordsCheck(_Strict):
    """The launch keywords (compile-option fields) one backend version defines.

    A keyword that some other row of the option table defines but this one does not is rejected: the
    launcher raises KeyError "Keyword argument X was specified but unrecognised". Keywords that no row
    defines are kernel parameters (BLOCK_M, ...) and are not judged.
    """

    kind: Literal["launch_keywords"]
    defined: list[str] = Field(min_length=1)


Check = Annotated[OptionValuesCheck | PowerOfTwoCheck | MaxValueCheck | ForbidComboCheck | ForbidCallCheck
                  | LaunchKeywordsCheck, Field(discriminator="kind")]
OPTION_CHECKS = (OptionValuesCheck, PowerOfTwoCheck, MaxValueCheck, ForbidComboCheck, LaunchKeywordsCheck)

_FACT_KEY = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)+$")
FactValue = bool | int | float | str | list[bool | int | float | str]


class Fact(_Strict):
    """One machine-checkable fact an entry states, e.g. {key: xe2.slm_per_xecore_kb, value: 256}.

    Keys are dotted (`<architecture or toolchain>.<quantity>`); two entries that apply to a common
    target and toolchain must not give one key different values (`kb validate` checks).
    """

    key: str
    value: FactValue

    @field_validator("key")
    @classmethod
    def _dotted(cls, value: str) -> str:
        if not _FACT_KEY.match(value):
            raise ValueError(f"fact key '{value}' must be dotted lowercase words, e.g. 'xe2.slm_per_xecore_kb'")
        return value


# ---- the kind-specific blocks ---------------------------------------------------------------------

class ConstraintBlock(_Strict):
    rule: str
    check: Check | None = None


class PatternBlock(_Strict):
    before: str
    after: str
    rationale: str


class RecipeBlock(_Strict):
    name: RecipeName
    params: dict[str, Any] = Field(default_factory=dict)
    preconditions: list[str] = Field(default_factory=list)
    expected_effect: str

    @model_validator(mode="after")
    def _params_fit_transform(self) -> RecipeBlock:
        if self.name == "tile-sizes":
            unknown = sorted(set(self.params) - set(PROBLEM_CLASSES))
            if unknown or not self.params:
                raise ValueError(f"tile-sizes params must be keyed by problem class ({', '.join(PROBLEM_CLASSES)}),"
                                 f" got {unknown or 'nothing'}")
        if self.name == "group-swizzle":
            size = self.params.get("GROUP_SIZE_M")
            if not isinstance(size, int) or size < 1:
                raise ValueError("group-swizzle params need an integer GROUP_SIZE_M >= 1")
        return self


class ExampleBlock(_Strict):
    path: str
    teaches: str


ConfigSpace = dict[ProblemClass, Annotated[list[dict[str, OptionValue]], Field(min_length=1)]]
_BLOCKS = {"constraint": "constraint", "pattern": "pattern", "recipe": "recipe", "config_space": "config_space",
           "example": "example"}


class Entry(_Strict):
    """One knowledge-base entry. Exactly one kind-specific block, named like the kind, is present."""

    id: str
    kind: Kind
    title: str = Field(min_length=1)
    stages: list[str] = Field(min_length=1)
    targets: list[str] = Field(min_length=1)
    toolchain: str | None = None
    source: str = Field(min_length=1)
    verified_on: VerifiedOn | None = None
    confidence: Confidence
    facts: list[Fact] = Field(default_factory=list)
    summary: str = Field(min_length=1)
    constraint: ConstraintBlock | None = None
    pattern: PatternBlock | None = None
    recipe: RecipeBlock | None = None
    config_space: ConfigSpace | None = None
    example: ExampleBlock | None = None

    _file: Path | None = PrivateAttr(default=None)
    _line: int = PrivateAttr(default=0)

    @field_validator("id")
    @classmethod
    def _kebab(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"id '{value}' must be kebab-case (lowercase letters, digits, single hyphens)")
        return value

    @field_validator("stages")
    @classmethod
    def _known_stages(cls, value: list[str]) -> list[str]:
        for stage in value:
            if stage not in stage_names():
                raise ValueError(f"unknown stage '{stage}' (known: {', '.join(stage_names())})")
        return value

    @field_validator("targets")
    @classmethod
    def _known_targets(cls, value: list[str]) -> list[str]:
        for target in value:
            if target not in TARGETS:
                raise ValueError(f"unknown target '{target}' (known: {', '.join(TARGETS)})")
        return value

    @field_validator("toolchain")
    @classmethod
    def _toolchain_range(cls, value: str | None) -> str | None:
        if value is not None:
            split_toolchain_spec(value)  # raises ValueError with a precise message
        return value

    @model_validator(mode="after")
    def _one_block(self) -> Entry:
        present = [name for name in _BLOCKS.values() if getattr(self, name) is not None]
        if present != [self.kind]:
            others = [name for name in present if name != self.kind]
            if self.kind not in present:
                raise ValueError(f"a '{self.kind}' entry needs a '{self.kind}:' block")
            raise ValueError(f"a '{self.kind}' entry must not carry {', '.join(others)} block(s)")
        return self

    # Where the entry was read from: set by the loader, used in messages and for example paths.
    @property
    def file(self) -> Path | None:
        return self._file

    @property
    def line(self) -> int:
        return self._line

    def located(self, file: Path | None, line: int) -> Entry:
        self._file, self._line = file, line
        return self

    @property
    def where(self) -> str:
        return f"{self._file}:{self._line}" if self._file else "<memory>"

    def example_file(self) -> Path | None:
        """The example kernel's path, resolved against the directory of the YAML file that holds it."""
        if self.example is None:
            return None
        path = Path(self.example.path)
        if not path.is_absolute() and self._file is not None:
            path = self._file.parent / path
        return path


class KbProblem(BaseModel):
    """One finding of `kb validate`: where it is and what is wrong."""

    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class Violation(BaseModel):
    """A candidate kernel breaking a machine-checkable constraint; the message starts with the entry id."""

    entry_id: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"
