"""What crosses the batch's seams: the request, a problem file, the job one problem process is given and
the result it writes back."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from xe_forge.config import RunRequest
from xe_forge.pipeline.ratios import Ratio
from xe_forge.verify.models import Timing

PortedBy = Literal["lower", "general", "llm"]  # who made the seed of a problem that had none (batch/port.py)


class ProblemFile(BaseModel):
    """A problem: its reference (`path`); in the examples layout (a folder per problem) also its own seed
    kernel and spec, which then win over --seeds."""

    id: int
    name: str
    path: str
    seed: str | None = None
    spec: str | None = None


class BatchRequest(BaseModel):
    """A batch: which problems, where the results go, and the one RunRequest every problem runs with."""

    problems_dir: str
    seeds_dir: str | None = None
    only: str | None = None
    workers: int | None = None
    resume: bool = False
    out: str = "batch-out"
    time_limit: float = 1800.0
    compile: bool = False
    count_degenerate: bool = Field(False, description="count speedups on degenerate problems in fast_p")
    ray: str | None = Field(None, description="Ray cluster address (batch/ray_backend.py); None: local workers")
    no_seeds: bool = Field(False, description="port every problem (batch/port.py), never taking a seed from --seeds")
    port_only: bool = Field(False, description="stop at the verified port: no optimize stages (implies no_seeds)")
    run: RunRequest = Field(default_factory=RunRequest)


class ProblemJob(BaseModel):
    """What the batch parent hands one problem process: the problem, and the run to make of it.

    `run.kernel` is the seed ("" when there is none: batch/port.py ports the problem first), `run.reference`
    the problem file itself, `run.run_dir` the batch's runs/ directory.
    """

    problem: ProblemFile
    run_id: str
    run: RunRequest
    compile: bool = False
    port_only: bool = False
    result_path: str


class ProblemResult(BaseModel):
    """What one problem process reports (JSON beside its job) and the batch store keeps per problem."""

    problem_id: int
    name: str
    run_id: str | None = None
    status: str = "failed"
    reason: str = ""
    exit_code: int | None = Field(None, description="the optimize run's exit code; 3: environment, retried on --resume")
    correct: bool = False
    degenerate: list[str] = Field(default_factory=list)
    not_checked: list[str] = Field(default_factory=list, description="checks the run did not run (its report)")
    device: str | None = None
    ported: bool = False
    ported_by: PortedBy | None = Field(None, description="who made the seed of a problem that had none")
    unchanged: bool = Field(False, description="the run kept its seed: `ratios` time the seed")
    ratios: list[Ratio] = Field(default_factory=list, description="every timed ratio of the final kernel, both "
                                "sides named: the run's report.ratios (output or unchanged seed vs eager, "
                                "torch.compile, the seed), a port's own verification, the batch's re-timing")
    timings: dict[str, Timing] = Field(default_factory=dict, description="`ratios` by baseline key ('eager', "
                                       "'torch.compile', 'input kernel': the seed), as report.json's `timings`")
    seed_timings: dict[str, Timing] = Field(default_factory=dict, description="the seed vs eager")
    paths: dict[str, str] = Field(default_factory=dict, description="a port: the path that served each checked shape")
    traceback: str | None = None
    node: str | None = Field(None, description="the Ray node that ran it (None: a local worker)")

    @classmethod
    def failed(cls, problem: ProblemFile, run_id: str | None, status: str, reason: str, **more: object) -> ProblemResult:
        return cls(problem_id=problem.id, name=problem.name, run_id=run_id, status=status, reason=reason, **more)
