"""What crosses the batch's seams: the request, a problem file, and the job one problem process is given."""

from __future__ import annotations

from pydantic import BaseModel, Field

from xe_forge.config import RunRequest


class ProblemFile(BaseModel):
    id: int
    name: str
    path: str


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
    run: RunRequest = Field(default_factory=RunRequest)


class ProblemJob(BaseModel):
    """What the batch parent hands one problem process: the problem, and the run to make of it.

    `run.kernel` is the seed ("" when there is none: the LLM ports the problem first), `run.reference`
    the problem file itself, `run.run_dir` the batch's runs/ directory.
    """

    problem: ProblemFile
    run_id: str
    run: RunRequest
    compile: bool = False
    result_path: str
