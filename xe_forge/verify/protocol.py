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

from xe_forge.verify.models import AuditSummary, Comparison, Finding

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
    tiles: list[int] = Field(default_factory=list)  # block sizes and loop steps the candidate launched with
    seed: int = 0  # secret: the shape drawn per run, which no earlier printout names


class Planned(Reply):
    shapes: list[ShapeInfo] = Field(default_factory=list)
    frozen: dict[str, str] = Field(default_factory=dict)
    bad_input: str | None = None


class TrialPlan(BaseModel):
    id: str
    weights: str = "initial"  # "initial", "perturbed", or "perturbed:<state entry>"
    dist: Literal["problem", "signed", "wide"] = "problem"
    seed: int
    layout: str | None = None  # non-contiguous storage (problem/layouts.py), where the reference accepts it
    scale: Literal["unit", "small", "large"] = "unit"  # signed inputs at 1e-3, or spread up to 1e5 (cases.SCALES)
    zeros: float = 0.0  # the share of input elements drawn as exact zeros, where the reference allows it
    same: str | None = None  # the inputs of this earlier trial, as they are (the runner calls on its tensors again)
    keep: bool = False  # with `same`: from the state that trial's call left (the candidate's is not reloaded)
    eval: bool = False  # the reference in eval mode (`model.eval()`: batch norm on its running statistics)


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
    reference_flops: dict[str, float] = Field(default_factory=dict)  # the reference's own torch FLOPs per family
    eval_refused: str | None = None  # the reference fails in eval mode: the eval-mode trial is not run


class CompareItem(BaseModel):
    id: str  # the trial whose expected output applies
    name: str = ""  # the key of its result (default: id)
    output: str  # file the candidate's harness wrote
    against: str | None = None  # compare with another candidate output file instead (ghost replay)
    state: dict[str, list[float]] | None = None  # the candidate's state entries after the call (state_check.py)


class Compare(BaseModel):
    op: Literal["compare"] = "compare"
    dir: str
    items: list[CompareItem]
    degenerate: list[tuple[str, str]] = Field(default_factory=list)  # trial pairs at the same weights


class ItemResult(BaseModel):
    comparisons: list[Comparison] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    passed: bool = False
    notes: list[str] = Field(default_factory=list)


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
    subset: bool = True  # run a kernel file with the host subset's builtins (off only in tests of other defences)


class Imported(Reply):
    failure: str | None = None
    line: int | None = None


class CallPlan(BaseModel):
    id: str
    state: str  # state-dict file loaded into the model before the call
    inputs: str
    output: str
    check_inputs: bool = False  # the harness compares the inputs after the call with a copy taken before
    reuse: str | None = None  # copy these values into the input tensors of this earlier call
    again: bool = False  # with `reuse`: call on that call's input tensors as they stand (no copy, same _version)
    reload: bool = True  # load `state` into the model first (False, with `again`: the very same call made twice)
    ghost: bool = False  # every Triton launch a no-op
    # how the call runs, drawn in secret per call so no observable tells a checked call from production
    grad: Literal["off", "on", "inference"] = "off"  # torch.no_grad, torch.enable_grad or torch.inference_mode
    input_grad: bool = False  # with grad on: floating inputs require grad (an activation in training)
    poison: bool = True  # fresh allocations NaN-poisoned (else left as the allocator returns them)
    frozen: bool = False  # every parameter requires_grad False (`model.requires_grad_(False)`: a frozen layer)
    eval: bool = False  # every module's training flag False, as `model.eval()` leaves it (inference)
    warm: int = 0  # calls of the same model (launches no-ops, fresh copies of the inputs) before this one


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
    mutated: list[int] = Field(default_factory=list)  # inputs forward changed in place
    refused: list[str] = Field(default_factory=list)  # host-subset refusals at run time (guarded.py)
    tiles: list[int] = Field(default_factory=list)  # integer constexprs the launches used (launch_record.py)
    state: dict[str, list[float]] = Field(default_factory=dict)  # state entries sent beside the output: name -> [numel]
    grids: list[list[int]] = Field(default_factory=list)
    reused: list[str] = Field(default_factory=list)  # earlier calls' outputs this call's output aliases or changed
    flags: list[str] = Field(default_factory=list)  # bool constexprs the launches took (launch_record.py)


class Ran(Reply):
    build_failure: str | None = None
    build_check: str = "runtime"  # the finding a build failure makes ("state-dict": weights.interface_change)
    build_line: int | None = None
    calls: list[CallResult] = Field(default_factory=list)


Side = Literal["candidate", "input", "eager", "compile"]


class TimePrepare(BaseModel):
    """Build one side for timing in this process and warm it up; every repetition later draws fresh
    inputs from its own seed, as the reference process does."""

    op: Literal["time_prepare"] = "time_prepare"
    side: Side
    init: str
    seed: int
    state: str
    spec: dict[str, Any] | None = None  # to draw inputs as the reference process does
    variant: str | None = None
    dtype: str = "float32"
    template_seed: int  # the inputs every timed call redraws (shapes, dtypes, integer inputs)
    pool: list[int]  # input seeds the warm-up and the spins rotate through
    sample_dir: str = ""
    allowed: list[str] = Field(default_factory=list)


class TimeReady(Reply):
    failure: str | None = None
    call_ms: float = 0.0  # one call on the device timer (median of a few), to size the repetitions
    host_ms: float = 0.0  # host time to queue one call and its fingerprint, to size the spins' padding
    flush_ms: float = 0.0  # one cache flush on the device


class TimeChunk(BaseModel):
    """Time these repetitions of the prepared side, one synchronize at the end."""

    op: Literal["time_chunk"] = "time_chunk"
    reps: list[int]  # repetition numbers (the parent pairs both sides by them)
    seeds: list[int]  # each repetition's input seed
    samples: list[int] = Field(default_factory=list)  # reps run under the full harness and kept whole, not timed
    pad: int = Field(default=1, ge=1, le=64)  # cache flushes queued before each timed call, the same on both sides


class Chunk(Reply):
    failure: str | None = None
    ms: list[float] = Field(default_factory=list)  # per timed repetition (reps minus samples), in order
    fingerprints: list[list[float]] = Field(default_factory=list)  # per timed repetition
    samples: list[CompareItem] = Field(default_factory=list)  # id = "seed:<n>"
    sample_audits: list[CallResult] = Field(default_factory=list)


class Spin(BaseModel):
    """n padded iterations of the prepared candidate (or of nothing): the parent holds the clock (clock.py)."""

    op: Literal["spin"] = "spin"
    which: Literal["candidate", "null"]
    n: int
    pad: int = 1


class Spun(Reply):
    fingerprints: list[list[float]] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)


JudgeRequest = Annotated[Ping | Load | PlanUnseen | Prepare | Compare | CheckTimed | Release,
                        Field(discriminator="op")]
RunnerRequest = Annotated[Ping | Import | Run | TimePrepare | TimeChunk | Spin, Field(discriminator="op")]
JUDGE_REQUESTS: TypeAdapter = TypeAdapter(JudgeRequest)
RUNNER_REQUESTS: TypeAdapter = TypeAdapter(RunnerRequest)
