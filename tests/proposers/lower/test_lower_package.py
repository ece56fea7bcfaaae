"""Packaging recorded GPU lowerings into standalone kernel modules, then verifying them on the CPU."""

from __future__ import annotations

import ast

import pytest
from recorded import RECORDED, lowering, reference, spec

from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.lower.models import PackagingError
from xe_forge.proposers.lower.package import package
from xe_forge.proposers.lower.service import verify_port
from xe_forge.verify.static import check_source


def packaged(name: str):
    return package(lowering(name), reference(name).read_text())


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_module_is_standalone_and_device_neutral(name: str) -> None:
    out = packaged(name)
    tree = ast.parse(out.source)
    imports = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert not any("_inductor" in i or "_dynamo" in i for i in imports), imports
    assert "cuda" not in out.source.lower().replace("triton_", ""), "a device is named in the packaged module"
    top = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert {"Model", "get_inputs", "get_init_inputs"} <= top
    jit = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
           and any("triton.jit" in ast.unparse(d) for d in n.decorator_list)}
    assert set(out.kernels) <= jit and out.kernels
    forward = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "forward")
    launched = {n.func.value.id for n in ast.walk(forward) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name)}
    assert launched == set(out.kernels)
    # the constructor is the reference's: parameters and buffers pair with it by name
    ref_init = next(f for f in ast.walk(ast.parse(reference(name).read_text()))
                    if isinstance(f, ast.FunctionDef) and f.name == "__init__")
    init = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "__init__")
    assert ast.dump(init) == ast.dump(ref_init)


@pytest.mark.parametrize("name", sorted(n for n in RECORDED if n != "66_Matmul_Dropout_Softmax"))
def test_static_checks_pass_with_no_torch_allowance(name: str) -> None:
    result = check_source(packaged(name).source, allow=())
    assert result.passed, [f.render() for f in result.findings]


def test_a_kept_library_call_is_listed_and_needs_an_allowance() -> None:
    out = packaged("66_Matmul_Dropout_Softmax")
    assert out.extern == ["torch.ops.aten.randint.low_out"]
    assert any("randint" in n for n in out.notes)
    blocked = check_source(out.source, allow=())
    assert any(f.check == "torch-compute" and "randint" in f.message for f in blocked.findings)
    assert check_source(out.source, allow=out.extern).passed


def test_sizes_come_from_the_live_model_and_inputs() -> None:
    source = packaged("12_Gemm_Multiply_LeakyReLU").source
    forward = source[source.index("def forward"):source.index("batch_size =")]
    assert "x.size(0)" in forward and "self.gemm.weight.size(0)" in forward
    assert "self.multiplier" in forward and "self.leaky_relu.negative_slope" in forward
    assert "1024" not in forward and "8192" not in forward


@pytest.mark.parametrize("name", ["12_Gemm_Multiply_LeakyReLU", "18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp"])
def test_packaged_gemm_ports_pass_the_verifier(name: str, cpu_evaluator) -> None:
    problem = load_problem(reference(name), reference(name), spec(name))
    outcome = verify_port(problem, cpu_evaluator, lowering(name), allow_torch=set())
    assert outcome.passed, outcome.reason
    labels = [r.variant for r in outcome.verdict.correctness]
    assert any(label.startswith("unseen") for label in labels)  # unseen shapes were checked too


@pytest.mark.slow
@pytest.mark.parametrize("name", ["33_Gemm_Scale_BatchNorm", "21_Conv2d_Add_Scale_Sigmoid_GroupNorm",
                                  "65_Conv2d_AvgPool_Sigmoid_Sum"])
def test_packaged_norm_conv_and_bf16_ports_pass_the_verifier(name: str, cpu_evaluator) -> None:
    problem = load_problem(reference(name), reference(name), spec(name))
    outcome = verify_port(problem, cpu_evaluator, lowering(name), allow_torch=set())
    assert outcome.passed, outcome.reason


def test_graph_breaks_and_records_without_sources_are_refused() -> None:
    ref = reference("12_Gemm_Multiply_LeakyReLU").read_text()
    rec = lowering("12_Gemm_Multiply_LeakyReLU")
    with pytest.raises(PackagingError, match="graph break"):
        package(rec.model_copy(update={"codes": rec.codes * 2}), ref)
    with pytest.raises(PackagingError, match="no graph-input sources"):
        package(rec.model_copy(update={"placeholders": None}), ref)
    with pytest.raises(PackagingError, match="takes 7 inputs"):
        package(rec.model_copy(update={"placeholders": rec.placeholders[:-1]}), ref)
    with pytest.raises(PackagingError, match="nothing to package"):
        package(rec.model_copy(update={"ok": False, "error": "NoValidChoicesError"}), ref)


def test_unknown_inductor_helpers_are_named() -> None:
    rec = lowering("33_Gemm_Scale_BatchNorm")
    code = rec.codes[0].replace("triton_helpers.welford_combine", "triton_helpers.some_new_helper", 1)
    assert code != rec.codes[0]
    with pytest.raises(PackagingError, match="triton_helpers.some_new_helper"):
        package(rec.model_copy(update={"codes": [code]}), reference("33_Gemm_Scale_BatchNorm").read_text())


def test_a_missing_launch_config_is_named() -> None:
    rec = lowering("12_Gemm_Multiply_LeakyReLU")
    configs = {k: v for k, v in rec.configs.items() if not k.startswith("triton_poi")}
    with pytest.raises(PackagingError, match="no launch config was recorded"):
        package(rec.model_copy(update={"configs": configs}), reference("12_Gemm_Multiply_LeakyReLU").read_text())
