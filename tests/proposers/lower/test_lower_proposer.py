"""The `lower` candidate source in a stage, and the batch's no-seed port by lowering."""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded import at_spec_shapes, lowering, reference, spec

from xe_forge.batch.port import port_problem
from xe_forge.config import RunRequest, Settings
from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.lower import service
from xe_forge.proposers.lower.proposer import LowerProposer
from xe_forge.stages import load_stages

NAME = "12_Gemm_Multiply_LeakyReLU"


def request():
    from xe_forge.proposers.base import StageRequest

    return StageRequest(stage=load_stages()["fusion"], code="seed", reference="ref")


def test_the_fusion_stage_declares_the_lower_source() -> None:
    assert load_stages()["fusion"].sources == ["lower"]


def test_on_the_cpu_the_source_offers_nothing_and_says_why() -> None:
    problem = load_problem(reference(NAME), reference(NAME), spec(NAME))
    source = LowerProposer(problem, device="cpu")
    assert not source.available()
    assert source.next(request()) is None
    assert "lowering needs a GPU" in source.skip


def test_with_a_lowering_it_offers_the_packaged_module_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "lower_problem", lambda problem, **_: lowering(NAME))
    problem = load_problem(reference(NAME), reference(NAME), spec(NAME))
    source = LowerProposer(problem, device="cuda")
    first = source.next(request())
    assert first is not None and first.source == "lower" and first.recipe == "inductor-lowering"
    assert "triton_tem_fused_addmm_t_0[" in first.code
    assert source.next(request()) is None  # once per stage
    source.reset()
    assert source.next(request()) is not None


def test_a_kernel_that_is_its_own_reference_is_not_lowered() -> None:
    problem = load_problem(reference(NAME), None, spec(NAME))
    assert problem.reference_is_self
    source = LowerProposer(problem, device="cuda")
    assert not source.available() and source.next(request()) is None


def job(tmp_path: Path, engine: str = "rules") -> RunRequest:
    """A batch problem's run with no seed (kernel ""), as batch/child.py hands it to the port."""
    return RunRequest(reference=str(reference(NAME)), spec=str(spec(NAME)), run_dir=tmp_path, engine=engine,
                      device="cpu", max_iters=1, timeout=300)


def test_batch_without_seed_gpu_or_llm_is_ported_by_the_general_path(tmp_path: Path) -> None:
    result = port_problem(job(tmp_path), "p012", Settings())
    assert result.seed is not None and result.by == "general", result.reason
    assert "def forward_general" not in Path(result.seed).read_text()  # the general path is all of forward
    again = port_problem(job(tmp_path), "p012", Settings())  # a resumed batch reuses the verified port
    assert again.seed == result.seed and again.by == "general"


def test_batch_without_seed_is_ported_by_a_verified_lowering(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(service, "lower_problem", lambda problem, **_: lowering(NAME))
    result = port_problem(job(tmp_path), "p012", Settings())
    assert result.seed is not None and result.by == "lower", result.reason
    assert "Launches the kernels TorchInductor generated" in Path(result.seed).read_text()
    again = port_problem(job(tmp_path), "p012", Settings())  # a resumed batch reuses the verified port
    assert again.seed == result.seed and again.by == "lower"


def test_a_lowering_that_fails_verification_is_a_failed_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    broken = at_spec_shapes(NAME)  # lowered at the spec's own shapes: its fast path serves them
    broken = broken.model_copy(update={"codes": [broken.codes[0].replace("tmp5 > tmp6", "tmp5 < tmp6")]})
    assert broken.codes[0] != at_spec_shapes(NAME).codes[0]
    monkeypatch.setattr(service, "lower_problem", lambda problem, **_: broken)
    result = port_problem(job(tmp_path), "p012", Settings())
    assert result.seed is None and result.status == "failed" and "correctness" in result.reason


@pytest.mark.slow  # two verifications of a GEMM under the interpreter, and a scripted model over HTTP
def test_a_failed_lowering_is_where_the_llm_port_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from pipeline.fake_openai import FakeOpenAI, Script, code_answer

    from xe_forge.batch.port import LOWERED_START
    from xe_forge.store import RunStore

    good = at_spec_shapes(NAME)  # its fast path serves the spec's shapes, so a broken one fails there
    broken = good.model_copy(update={"codes": [good.codes[0].replace("tmp5 > tmp6", "tmp5 < tmp6")]})
    monkeypatch.setattr(service, "lower_problem", lambda problem, **_: broken)
    # the LLM's answer: the good lowering over the general path (the lowering alone, unguarded, is wrong on
    # the strided inputs of trial 1)
    packaged, why = service.port_for(load_problem(reference(NAME), reference(NAME), spec(NAME)), [good])
    assert packaged is not None, why
    fixed = packaged.source
    with FakeOpenAI(Script(answers=[code_answer(fixed)])) as server:
        settings = Settings(model="openai/fake-porter", api_base=server.api_base, _env_file=None)
        result = port_problem(job(tmp_path, engine="llm"), "p012", settings)
        (asked,) = server.requests
    assert result.seed is not None and result.by == "llm", result.reason
    assert LOWERED_START.strip() in asked.text and "tmp5 < tmp6" in asked.text  # refines the lowered candidate
    store = RunStore(tmp_path / "p012-port" / "store.sqlite")
    try:
        rows = [(c["iteration"], c["source"], bool(c["passed"])) for c in store.candidates("p012")]
    finally:
        store.close()
    assert rows == [(0, "lower", False), (1, "llm", True)]
