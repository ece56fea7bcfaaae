"""A port is fast paths over a general path: each fast path serves only the signature it was lowered for."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from recorded import at_spec_shapes, lowering, reference, spec

from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.lower.general.probe import ProbeJob, probe
from xe_forge.proposers.lower.models import PackagingError
from xe_forge.proposers.lower.port import package_port
from xe_forge.proposers.lower.service import verify_port
from xe_forge.verify.static import check_source

CONV = "21_Conv2d_Add_Scale_Sigmoid_GroupNorm"
GEMM = "12_Gemm_Multiply_LeakyReLU"


def probed(name: str):
    problem = load_problem(reference(name), reference(name), spec(name))
    return problem, probe(ProbeJob(reference_path=str(reference(name)), spec=problem.spec.model_dump(mode="json"),
                                   variant=problem.variant))


def port(name: str, lowerings, mode="exact"):
    problem, result = probed(name)
    return package_port(problem.reference.source, lowerings, result, mode=mode)


def imported(source: str, tmp_path: Path, stem: str = "port"):
    path = tmp_path / f"{stem}.py"
    path.write_text(source)
    spec_ = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(module)
    return module


def conv_model(module, channels: int = 8):
    return module.Model(channels, 32, 3, 8, (32, 1, 1), (32, 1, 1))


def test_a_port_has_both_paths_and_passes_the_static_checks() -> None:
    packaged = port(CONV, [lowering(CONV)])
    assert set(packaged.paths) == {"fast0", "general"}
    assert packaged.paths["general"] and all(k.startswith("xfg_") for k in packaged.paths["general"])
    assert not set(packaged.paths["fast0"]) & set(packaged.paths["general"])
    assert "x (128, 8, 256, 256)" in packaged.signatures["fast0"]
    result = check_source(packaged.source, allow=())
    assert result.passed, [f.render() for f in result.findings]


def test_the_fast_path_accepts_only_its_signature(tmp_path: Path) -> None:
    module = imported(port(CONV, [at_spec_shapes(CONV)]).source, tmp_path)
    model = conv_model(module)
    x = torch.rand(2, 8, 10, 10)
    assert module.xfg_fast0_accepts(model, x)
    assert not module.xfg_fast0_accepts(model, torch.rand(3, 8, 10, 10))  # another batch: another signature
    assert not module.xfg_fast0_accepts(model, x.double())  # dtype
    assert not module.xfg_fast0_accepts(model, x.transpose(2, 3))  # strides (the same shape)
    assert not module.xfg_fast0_accepts(model, torch.rand(2 * 8 * 10 * 10 + 1)[1:].view(2, 8, 10, 10))  # alignment
    model.conv.padding = (1, 1)  # a configuration the lowering did not see (same weight shapes)
    assert not module.xfg_fast0_accepts(model, x)
    model = conv_model(module)
    model.group_norm.eps = 1e-3
    assert not module.xfg_fast0_accepts(model, x)
    model = conv_model(module).eval()
    assert not module.xfg_fast0_accepts(model, x)
    model = conv_model(module)
    model.conv.bias = None  # a missing tensor is a mismatch, never an exception
    assert not module.xfg_fast0_accepts(model, x)


def test_a_call_outside_the_signature_is_the_general_paths_and_correct(tmp_path: Path) -> None:
    import os

    assert os.environ.get("TRITON_INTERPRET") == "1"
    ref_module = imported(reference(CONV).read_text(), tmp_path, "ref")
    module = imported(port(CONV, [at_spec_shapes(CONV)]).source, tmp_path)
    torch.manual_seed(0)
    ref = ref_module.Model(5, 24, 3, 4, (24, 1, 1), (24, 1, 1))  # other channels and groups than lowered
    got = module.Model(5, 24, 3, 4, (24, 1, 1), (24, 1, 1))
    got.load_state_dict(ref.state_dict())
    x = torch.rand(3, 5, 9, 7)  # and a non-square image, which the lowering's (s, s) sizes could not take
    assert not module.xfg_fast0_accepts(got, x)
    with torch.no_grad():
        assert torch.allclose(got(x), ref(x), rtol=1e-4, atol=1e-4)


def test_recorded_guards_are_checked_per_call(tmp_path: Path) -> None:
    record = at_spec_shapes(CONV)
    holds = record.model_copy(update={"guards": ["Eq(Mod(x.size(2), 2), 0)", "x.size(0) < 16"]})
    fails = record.model_copy(update={"guards": ["Eq(Mod(x.size(2), 3), 0)"]})
    x = torch.rand(2, 8, 10, 10)
    source = port(CONV, [holds]).source
    assert "if not (x.size(2) % 2 == 0):" in source and "if not (x.size(0) < 16):" in source
    good = imported(source, tmp_path, "good")
    assert good.xfg_fast0_accepts(conv_model(good), x)
    bad = imported(port(CONV, [fails]).source, tmp_path, "bad")
    assert not bad.xfg_fast0_accepts(conv_model(bad), x)


def test_an_unreadable_guard_is_noted_when_exact_and_refused_when_dynamic() -> None:
    record = at_spec_shapes(CONV).model_copy(update={"guards": ["SomeNewSympyFunction(x.size(0)) > 1"]})
    exact = port(CONV, [record])
    assert "fast0" in exact.paths and any("not expressible" in n for n in exact.notes)
    dynamic = port(CONV, [record], mode="dynamic")
    assert "fast0" not in dynamic.paths and any("cannot check" in n for n in dynamic.notes)


def test_a_dynamic_fast_path_holds_its_own_size_asserts(tmp_path: Path) -> None:
    # the 2026-11 GEMM lowering took in_features == out_features (one symbol): the asserts say so
    module = imported(port(GEMM, [lowering(GEMM)], mode="dynamic").source, tmp_path)
    square = module.Model(70, 70, 2.0, 0.1)
    assert module.xfg_fast0_accepts(square, torch.rand(37, 70))
    assert module.xfg_fast0_accepts(square, torch.rand(5, 70))  # any batch
    assert not module.xfg_fast0_accepts(module.Model(70, 33, 2.0, 0.1), torch.rand(37, 70))
    assert not module.xfg_fast0_accepts(square, torch.rand(1, 70))  # Dynamo assumed every size >= 2


def test_more_fast_paths_are_renamed_and_dispatched_in_order(tmp_path: Path) -> None:
    ci, other = at_spec_shapes(GEMM), at_spec_shapes(GEMM, spec_path=_spec_with(tmp_path, GEMM, "BATCH: 5, FEAT: 33"))
    packaged = port(GEMM, [ci, other])
    assert set(packaged.paths) == {"fast0", "fast1", "general"}
    assert all(k.endswith("_f1") for k in packaged.paths["fast1"])
    module = imported(packaged.source, tmp_path)
    assert module.xfg_fast1_accepts(module.Model(33, 33, 2.0, 0.1), torch.rand(5, 33))
    assert not module.xfg_fast0_accepts(module.Model(33, 33, 2.0, 0.1), torch.rand(5, 33))


def _spec_with(tmp_path: Path, name: str, dims: str) -> Path:
    text = spec(name).read_text().replace("{BATCH: 37, FEAT: 70}", "{" + dims + "}")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_without_a_general_path_the_lowering_serves_every_call() -> None:
    problem, result = probed(CONV)
    result.graph.reason = "a construct the tracer cannot express"
    packaged = package_port(problem.reference.source, [lowering(CONV)], result)
    assert set(packaged.paths) == {"fast0"} and "no general path" in packaged.notes[0]
    with pytest.raises(PackagingError, match="no general path"):
        package_port(problem.reference.source, [], result)


def test_paths_are_named_from_the_kernels_launched() -> None:
    packaged = port(CONV, [lowering(CONV)])
    fast, general = packaged.paths["fast0"], packaged.paths["general"]
    assert packaged.path_of(fast[:1]) == "fast0" and packaged.path_of(general) == "general"
    assert packaged.path_of(fast[:1] + general[:1]) == "fast0+general" and packaged.path_of([]) == "unknown"


@pytest.mark.slow
def test_the_verifier_sees_each_path_where_it_serves(cpu_evaluator) -> None:
    problem = load_problem(reference(GEMM), reference(GEMM), spec(GEMM))
    outcome = verify_port(problem, cpu_evaluator, [at_spec_shapes(GEMM)], allow_torch=set())
    assert outcome.passed, outcome.reason
    assert outcome.paths["ci"] == "fast0+general"  # trial 1's strided inputs fail the fast path's stride guard
    assert {p for k, p in outcome.paths.items() if k.startswith("unseen")} == {"general"}


@pytest.mark.slow
def test_a_wrong_fast_path_fails_where_it_serves(cpu_evaluator) -> None:
    good = at_spec_shapes(GEMM)
    broken = good.model_copy(update={"codes": [good.codes[0].replace("tmp5 > tmp6", "tmp5 < tmp6")]})
    problem = load_problem(reference(GEMM), reference(GEMM), spec(GEMM))
    outcome = verify_port(problem, cpu_evaluator, [broken], allow_torch=set(), unseen=False)
    assert not outcome.passed and "fast0" in outcome.paths["ci"] and "correctness" in outcome.reason


@pytest.mark.slow
def test_a_lowering_pinned_to_other_sizes_still_ports_by_the_general_path(cpu_evaluator) -> None:
    name = "17_Conv2d_InstanceNorm_Divide"  # every size pinned by the lowering, none of them the spec's
    problem = load_problem(reference(name), reference(name), spec(name))
    outcome = verify_port(problem, cpu_evaluator, [lowering(name)], allow_torch=set())
    assert outcome.passed, outcome.reason
    assert set(outcome.paths.values()) == {"general"}
