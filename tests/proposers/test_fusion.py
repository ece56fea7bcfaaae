"""fuse-epilogue: the reference traced with torch.fx, planned into launches, generated as Triton, and
judged by the verifier on the examples and on KernelBench GEMM problems outside examples/."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from xe_forge.kb import load_kb
from xe_forge.problem.kernel import load_problem
from xe_forge.proposers.fusion import trace
from xe_forge.proposers.fusion.plan import build_plan
from xe_forge.proposers.fusion.trace import trace_in_process
from xe_forge.proposers.rules import propose_rules
from xe_forge.targets.base import Toolchain
from xe_forge.verify.static import check_source

ROOT = Path(__file__).resolve().parents[2]
KERNELBENCH = sorted((Path(__file__).parent / "kernelbench").glob("*.py"))
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if (p / "kernel.py").is_file())
GEMM_EXAMPLES = [p for p in EXAMPLES if "Conv" not in p.name]
SM90 = Toolchain(name="triton", version="3.6.0")
SUBPROCESS = trace._trace_in_subprocess
pytestmark = pytest.mark.usefixtures("trace_in_this_process")


def example(number: int) -> Path:
    return next(p for p in EXAMPLES if p.name.split("_")[0] == str(number))


def kernelbench(number: int) -> Path:
    return next(p for p in KERNELBENCH if p.name.split("_")[0] == str(number))


def fuse(seed: str, reference: str, io: str = "pointer") -> tuple[str | None, str]:
    """The fused candidate (or None) and the rationale / skip reason."""
    spaces = [e.model_dump(mode="json", exclude_none=True) for e in load_kb().filter(kind="config_space")]
    entry = {"id": "t", "kind": "recipe", "recipe": {"name": "fuse-epilogue", "params": {
        "io": io, "config_space": "sm90-fused-gemm-space", "class": "gemm-epilogue"}}}
    found, skips = propose_rules(seed, stage="fusion", target="nvidia-sm90", toolchain=SM90, recipes=[entry],
                                 config_spaces=spaces, reference=reference)
    return (found[0].code, found[0].rationale) if found else (None, skips[0].reason)


def ops_of(reference: Path) -> list[str]:
    graph = trace_in_process(reference.read_text()).graph
    assert graph is not None
    return [n.op for n in graph.nodes if n.op not in ("input", "param")]


# ---------------------------------------------------------------- tracing


@pytest.mark.parametrize(("number", "ops"), [
    (12, ["gemm", "add", "mul", "leaky_relu"]),
    (64, ["gemm", "add", "logsumexp", "leaky_relu", "leaky_relu", "gelu", "gelu"]),
    (45, ["gemm", "add", "sigmoid", "gemm", "add", "logsumexp"]),
    (84, ["gemm", "add", "batch_norm", "mul", "softmax"]),
    (18, ["gemm", "add", "sum"]),  # max/mean/logsumexp over a size-1 dim are the identity
])
def test_the_epilogue_is_read_from_the_reference(number: int, ops: list[str]) -> None:
    assert ops_of(example(number) / "kernel_pytorch.py") == ops


@pytest.mark.parametrize(("number", "ops"), [
    (55, ["gemm", "add", "pool", "sum", "mul"]),
    (51, ["gemm", "add", "sub", "mean", "gelu", "add"]),
    (97, ["gemm", "add", "batch_norm", "add", "div", "sigmoid", "mul"]),
])
def test_kernelbench_problems_outside_the_examples_trace(number: int, ops: list[str]) -> None:
    assert ops_of(kernelbench(number)) == ops


@pytest.mark.parametrize(("source", "reason"), [
    (lambda: kernelbench(66).read_text(), "nn.Dropout module `dropout` with p=0.2 in training mode draws random masks"),
    (lambda: kernelbench(75).read_text(), "parameter `bias` has shape [1, 80, 1, 1]"),
    (lambda: (example(1) / "kernel_pytorch.py").read_text(), "forward input `x` has shape"),
    (lambda: (example(12) / "kernel.py").read_text(), "torch.fx cannot trace"),
])
def test_refusals_name_the_construct(source, reason: str) -> None:  # noqa: ANN001
    result = trace_in_process(source())
    assert result.graph is None and reason in result.reason


def test_module_numbers_are_read_at_run_time() -> None:
    graph = trace_in_process((example(12) / "kernel_pytorch.py").read_text()).graph
    leaky = next(n for n in graph.nodes if n.op == "leaky_relu")
    mul = next(n for n in graph.nodes if n.op == "mul")
    assert leaky.scalars["negative_slope"].host == "self.leaky_relu.negative_slope"
    assert any(a.host == "self.multiplier" for a in mul.args)


# ---------------------------------------------------------------- planning


def test_plans_place_barriers_where_statistics_cross_tiles() -> None:
    graph = trace_in_process((example(84) / "kernel_pytorch.py").read_text()).graph
    plan = build_plan(graph, in_tile_groups=False)
    assert [p.kind for p in plan.phases] == ["gemm", "tile", "tile"]
    assert {s.node: (s.family, s.combine) for s in plan.stats.values()} == {
        "bn": ("col", "moments"), "softmax": ("row", "lse")}
    lse = build_plan(trace_in_process((example(64) / "kernel_pytorch.py").read_text()).graph, in_tile_groups=False)
    assert [p.kind for p in lse.phases] == ["gemm", "rows"] and not lse.stored  # no [M, N] round trip
    groups = trace_in_process((example(30) / "kernel_pytorch.py").read_text()).graph
    assert [p.kind for p in build_plan(groups, in_tile_groups=True).phases] == ["gemm"]
    assert [p.kind for p in build_plan(groups, in_tile_groups=False).phases] == ["gemm", "tile"]


# ---------------------------------------------------------------- generation


def test_the_generated_kernel_comes_from_the_reference_not_the_seed() -> None:
    reference = (example(12) / "kernel_pytorch.py").read_text()
    styles = Path(__file__).parent / "styles"
    first, _ = fuse((styles / "s01_ex12_module_constants.py").read_text(), reference)
    second, _ = fuse((styles / "s07_ex12_positional.py").read_text(), reference)
    assert first is not None and second is not None
    assert first.split("class Model")[0] == second.split("class Model")[0]


def test_generated_code_is_one_readable_module_that_passes_the_static_checks() -> None:
    code, rationale = fuse((example(99) / "kernel.py").read_text(), (example(99) / "kernel_pytorch.py").read_text(),
                           io="descriptor")
    assert code is not None and "2 launch(es)" in rationale
    assert not check_source(code).findings
    tree = ast.parse(code)
    kernels = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.endswith("_kernel")]
    assert all(ast.get_docstring(k) for k in kernels)
    assert "tl.make_tensor_descriptor" in code and "_tma_ready(x, w0)" in code
    assert "triton.set_allocator(_tma_scratch)" in code
    assert max(len(line) for line in code.splitlines()) < 200


def test_dispatch_by_shape_never_gives_a_small_batch_a_large_tile(tmp_path: Path) -> None:
    import triton

    code, _ = fuse((example(12) / "kernel.py").read_text(), (example(12) / "kernel_pytorch.py").read_text())
    namespace: dict = {}
    prune = re.search(r"def (_fit_\w+)\(configs, named_args, \*\*kwargs\):\n(?:    .*\n)+", code)
    exec(compile(prune.group(0), "prune", "exec"), {"triton": triton}, namespace)  # noqa: S102
    fit = namespace[prune.group(1)]
    configs = [triton.Config({"BLOCK_M": m, "BLOCK_N": n}) for m, n in ((128, 256), (64, 128), (16, 128))]
    assert [c.kwargs["BLOCK_M"] for c in fit(configs, {"M": 7, "N": 8192})] == [16]
    assert [c.kwargs["BLOCK_M"] for c in fit(configs, {"M": 33, "N": 8192})] == [64, 16]
    assert len(fit(configs, {"M": 1024, "N": 8192})) == 3
    assert [c.kwargs["BLOCK_N"] for c in fit(configs, {"M": 4, "N": 40})] == [128]  # smallest when none fits


@pytest.mark.slow
def test_the_reference_is_traced_in_a_subprocess() -> None:
    source = (example(76) / "kernel_pytorch.py").read_text().replace("class Model", "import sys\nclass Model")
    result = SUBPROCESS(source, 240.0)  # the real path (the module fixture patched the name for speed)
    assert result.graph is not None and [n.op for n in result.graph.nodes if n.op != "param"] == [
        "input", "gemm", "add", "relu"]
    assert not any("reference_traced" in name for name in sys.modules)  # never imported here
    hung = SUBPROCESS("import time\ntime.sleep(30)\n", 2.0)
    assert hung.graph is None and "longer than 2 s" in hung.reason


DEGENERATE = {"80"}
"""Examples whose reference is constant (max over a dim, then minus its own mean): no verdict but "cannot verify"."""


def verified(cpu_evaluator, kernel: Path, reference: Path, spec: Path | None, io: str) -> None:  # noqa: ANN001
    problem = load_problem(kernel, reference=reference, spec=spec)
    code, why = fuse(problem.kernel.source, problem.reference.source, io=io)
    assert code is not None, why
    verdict = cpu_evaluator.evaluate(code, problem, unseen=True, allow_torch=set())
    if kernel.parent.name.split("_")[0] in DEGENERATE:
        assert not verdict.passed and verdict.stage_failed == "unverifiable", verdict.stage_failed
        return
    assert verdict.passed, [f.render() for f in verdict.findings[:2]]


@pytest.mark.parametrize("number", [12, 64, 84])
def test_fused_candidates_pass_the_verifier(cpu_evaluator, number: int) -> None:  # noqa: ANN001
    ex = example(number)
    verified(cpu_evaluator, ex / "kernel.py", ex / "kernel_pytorch.py", ex / "spec.yaml", "descriptor")


@pytest.mark.slow
@pytest.mark.parametrize("io", ["pointer", "descriptor"])
@pytest.mark.parametrize("ex", GEMM_EXAMPLES, ids=lambda p: p.name.split("_")[0])
def test_every_gemm_example_fuses_and_passes(cpu_evaluator, ex: Path, io: str) -> None:  # noqa: ANN001
    verified(cpu_evaluator, ex / "kernel.py", ex / "kernel_pytorch.py", ex / "spec.yaml", io)


@pytest.mark.slow
@pytest.mark.parametrize("reference", [p for p in KERNELBENCH if p.name.split("_")[0] not in ("66", "75")],
                         ids=lambda p: p.name.split("_")[0])
def test_kernelbench_gemm_problems_outside_the_examples_fuse_and_pass(cpu_evaluator, reference: Path) -> None:  # noqa: ANN001
    verified(cpu_evaluator, reference, reference, None, "descriptor")
