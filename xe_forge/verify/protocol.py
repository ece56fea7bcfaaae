"""Messages between the parent and its two workers, as pydantic models sent as JSON.

Two processes, two roles (docs/VERIFIER.md):
- the reference process (`judge`) imports only the reference: it builds the weights and inputs from
  the parent's secret seeds, keeps the expected outputs in its own memory, and compares;
- the candidate process (`runner`) imports the candidate: it receives init args, state dicts and
  inputs as files, runs forward under the harness's instrumentation, and writes the outputs.

Tensors travel as `torch.save` files in a per-evaluation directory and are read back with
`weights_only=True`; messages are JSON, never pickles, so nothing the candidate's process sends can
run code in the parent or the judge. Every reply carries the names the patch guard saw rebound.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from xe_forge.verify.models import AuditSummary, Comparison, Finding, Timing

MAX_MESSAGE = 64 * 1024 * 1024


class Reply(BaseModel):
    """What every reply has: an internal error (the worker's own bug) and what was patched."""

    error: str | None = None
    traceback: str = ""
    patched: list[str] = Field(default_factory=list)


class Ping(BaseModel):
    op: Literal["ping"] = "ping"


class Pong(Reply):
    pid: int = 0


# ---------------------------------------------------------------- reference process (judge)


class ShapeInfo(BaseModel):
    key: str  # opaque id used in later requests
    label: str  # "ci" or "unseen 2"
    dims: dict[str, int | float] = Field(default_factory=dict)
    unseen: bool = False
    origin: str = ""  # "spec" or what the generated shape varies


class Load(BaseModel):
    op: Literal["load"] = "load"
    reference_path: str
    spec: dict[str, Any] | None = None
    variant: str | None = None
    precision: str = "keep"


class Loaded(Reply):
    bad_input: str | None = None
    main: ShapeInfo | None = None
    dtype: str = "float32"
    rtol: float = 1e-4
    atol: float = 1e-4
    dists: dict[str, str] = Field(default_factory=dict)  # "problem"/"signed" -> description


class PlanUnseen(BaseModel):
    op: Literal["plan_unseen"] = "plan_unseen"


class Planned(Reply):
    shapes: list[ShapeInfo] = Field(default_factory=list)
    frozen: dict[str, str] = Field(default_factory=dict)
    bad_input: str | None = None


class TrialPlan(BaseModel):
    id: str
    weights: str = "initial"  # "initial", "perturbed", or "perturbed:<state entry>"
    dist: Literal["problem", "signed"] = "problem"
    seed: int


class Prepare(BaseModel):
    op: Literal["prepare"] = "prepare"
    shape: str
    dir: str
    weight_seed: int
    perturb_seed: int
    trials: list[TrialPlan]


class Prepared(Reply):
    bad_input: str | None = None
    init: str = ""  # file with the constructor args
    states: dict[str, str] = Field(default_factory=dict)  # weights label -> state-dict file
    inputs: dict[str, str] = Field(default_factory=dict)  # trial id -> inputs file
    dists: dict[str, str] = Field(default_factory=dict)  # trial id -> distribution actually used
    params: list[str] = Field(default_factory=list)  # floating state entries the perturbation moved
    notes: list[str] = Field(default_factory=list)


class CompareItem(BaseModel):
    id: str  # the trial whose expected output applies
    name: str = ""  # the key of its result (default: id)
    output: str  # file the candidate's harness wrote
    after: str | None = None  # the inputs after the call (in-place mutation check)
    against: str | None = None  # compare with another candidate output file instead (ghost replay)


class Compare(BaseModel):
    op: Literal["compare"] = "compare"
    dir: str
    items: list[CompareItem]
    degenerate: list[tuple[str, str]] = Field(default_factory=list)  # trial pairs at the same weights


class ItemResult(BaseModel):
    comparisons: list[Comparison] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    passed: bool = False


class Compared(Reply):
    results: dict[str, ItemResult] = Field(default_factory=dict)  # item id -> comparison with the reference
    ghost_changed: dict[str, bool] = Field(default_factory=dict)  # item id -> output differs from `against`
    degenerate: list[str] = Field(default_factory=list)


class CheckTimed(BaseModel):
    """Timed outputs to verify: a fingerprint per timed call, full outputs of the sampled ones.

    Every timed call ran on fresh inputs drawn from its own seed (the reference process draws the same
    ones), so no output can be memoised across calls.
    """

    op: Literal["check_timed"] = "check_timed"
    dir: str
    shape: str = "main"
    template_seed: int
    fingerprints: list[list[float]]  # per call: [sum, |sum|, sum of squares, non-finite]
    seeds: list[int]  # the input seed of each fingerprint
    samples: list[CompareItem] = Field(default_factory=list)  # id = "seed:<n>"


class TimedChecked(Reply):
    bad_fingerprints: list[int] = Field(default_factory=list)
    samples: list[ItemResult] = Field(default_factory=list)


class Release(BaseModel):
    op: Literal["release"] = "release"
    dir: str


class Released(Reply):
    pass


# ---------------------------------------------------------------- candidate process (runner)


class Import(BaseModel):
    op: Literal["import"] = "import"
    path: str
    role: Literal["candidate", "baseline", "input", "reference"] = "candidate"


class Imported(Reply):
    failure: str | None = None
    line: int | None = None


class CallPlan(BaseModel):
    id: str
    state: str  # state-dict file loaded into the model before the call
    inputs: str
    output: str
    after: str | None = None
    reuse: str | None = None  # copy these values into the input tensors of this earlier call
    ghost: bool = False  # every Triton launch a no-op


class Run(BaseModel):
    op: Literal["run"] = "run"
    role: Literal["candidate", "input"] = "candidate"
    init: str
    seed: int
    calls: list[CallPlan]
    allowed: list[str] = Field(default_factory=list)
    kernel_list: bool = False  # also record the GPU kernels (CUDA profiler)


class CallResult(BaseModel):
    id: str
    launches: int = 0
    triton_kernels: list[str] = Field(default_factory=list)
    failure: str | None = None
    line: int | None = None
    audit: AuditSummary = Field(default_factory=AuditSummary)


class Ran(Reply):
    build_failure: str | None = None
    build_line: int | None = None
    calls: list[CallResult] = Field(default_factory=list)


class TimePlan(BaseModel):
    """Time the candidate against a baseline; every repetition draws fresh inputs from its own seed."""

    op: Literal["time"] = "time"
    init: str
    seed: int
    state: str
    spec: dict[str, Any] | None = None  # to draw inputs as the reference process does
    variant: str | None = None
    dtype: str = "float32"
    template_seed: int  # the inputs every timed call redraws (shapes, dtypes, integer inputs)
    seeds: list[int]  # one per repetition (as many as the most repetitions allowed)
    baseline: Literal["eager", "input", "compile"] = "eager"
    reps: int | None = None
    samples: list[float] = Field(default_factory=list)  # fractions of the reps: those calls are audited and kept
    sample_dir: str = ""
    allowed: list[str] = Field(default_factory=list)


class Timed(Reply):
    failure: str | None = None
    timing: Timing | None = None
    candidate_ms: list[float] = Field(default_factory=list)
    baseline_ms: list[float] = Field(default_factory=list)
    fingerprints: list[list[float]] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)  # the input seed of each fingerprint
    samples: list[CompareItem] = Field(default_factory=list)
    sample_audits: list[CallResult] = Field(default_factory=list)
    per_call_ms: float = 0.0  # the probe, for the parent to size its wall-clock cross-check


class Spin(BaseModel):
    """Run one side n times through the timed path (the first seeds' inputs, rotated): the parent holds the clock."""

    op: Literal["spin"] = "spin"
    which: Literal["candidate", "baseline", "null"]
    n: int


class Spun(Reply):
    fingerprints: list[list[float]] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)


JudgeRequest = Annotated[Ping | Load | PlanUnseen | Prepare | Compare | CheckTimed | Release,
                        Field(discriminator="op")]
RunnerRequest = Annotated[Ping | Import | Run | TimePlan | Spin, Field(discriminator="op")]
JUDGE_REQUESTS: TypeAdapter = TypeAdapter(JudgeRequest)
RUNNER_REQUESTS: TypeAdapter = TypeAdapter(RunnerRequest)
