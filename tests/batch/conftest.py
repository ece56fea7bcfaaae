"""Fixtures for the batch tests: a tiny KernelBench-format directory, its seeds, and one shared batch run.

Problems in fixtures/problems (seeds in fixtures/seeds, examples layout):
  1 normal, 2 degenerate (reference output is zeros), 3 seed aborts the process that runs it,
  4 seed hangs (only used by the time-limit test), 5 no seed at all.
Every problem process costs seconds (torch import, worker spawn), so the expensive run is shared by
the module that checks its figures, and the hang gets its own short run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.batch.models import BatchRequest
from xe_forge.batch.runner import run_batch
from xe_forge.config import RunRequest

FIXTURES = Path(__file__).parent / "fixtures"
PROBLEMS = FIXTURES / "problems"
SEEDS = FIXTURES / "seeds"
LLM_VARS = ("XE_FORGE_MODEL", "XE_FORGE_API_BASE", "XE_FORGE_API_KEY")


def batch_options(out: Path, **overrides: object) -> BatchRequest:
    """A short CPU batch over the fixtures: one cheap stage, one iteration; run options go to `run`."""
    values: dict[str, object] = dict(problems_dir=str(PROBLEMS), seeds_dir=str(SEEDS), out=str(out), device="cpu",
                                     engine="auto", variant="ci", stages="dtype", max_iters=1, time_limit=240.0,
                                     timeout=120.0)
    values.update(overrides)
    run = {k: values.pop(k) for k in list(values) if k in RunRequest.model_fields}
    return BatchRequest(**values, run=RunRequest(**run))


@pytest.fixture(scope="session")
def offline_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No LLM configured (so a problem without a seed is skipped) and a clean cwd (no stray .env).

    Problem processes inherit os.environ and the cwd, so both are set here for the whole session.
    """
    cwd = tmp_path_factory.mktemp("cwd")
    with pytest.MonkeyPatch.context() as mp:
        for var in LLM_VARS:
            mp.delenv(var, raising=False)
        mp.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        mp.chdir(cwd)
        yield cwd


@pytest.fixture(scope="session")
def full_batch(offline_env: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Problem 1 alone with one worker, then 1-3 and 5 with --resume and two workers.

    Returns the out dir, both summaries, and a time between the two runs.
    """
    out = tmp_path_factory.mktemp("batch") / "out"
    first = run_batch(batch_options(out, only="1", workers=1))
    between = time.time()
    second = run_batch(batch_options(out, only="1-3,5", workers=2, resume=True))
    return {"out": out, "first": first, "second": second, "between": between}


@pytest.fixture(scope="session")
def options():
    """The factory of BatchRequests for the fixtures (a fixture, so test modules need no imports of conftest)."""
    return batch_options

