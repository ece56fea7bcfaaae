"""`xe-forge spec init`: sizes bound to module constants, a ci the interpreter runs, a spec every command
reads, and `xe-forge check --device cpu` passing with it: on the examples and on KernelBench problems
outside examples/ (tests/problem/fixtures/kb: the KernelBench reference, and a first Triton port).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.errors import InputError
from xe_forge.problem.constants import module_constants, rewrite_constants
from xe_forge.problem.spec import SpecError, load_spec
from xe_forge.spec_init.bind import fit_many, fit_one
from xe_forge.spec_init.probe import InitFact, InputFact, ProbeResult, ladder
from xe_forge.spec_init.writer import init_spec, render_yaml

REPO = Path(__file__).resolve().parents[2]
KB = Path(__file__).parent / "fixtures" / "kb"
runner = CliRunner()


# ---------------------------------------------------------------- parts


def test_module_constants_follow_what_get_inputs_uses():
    source = ("import torch\nbatch_size = 16\nh = w = 10\nD, E = 3, -2\nunused = 7\nshape = (batch_size, 1)\n"
              "scale = 0.5\n"
              "def get_inputs():\n    return [torch.rand(batch_size, h, w, D)]\n"
              "def get_init_inputs():\n    return [shape, scale, E]\n")
    assert module_constants(source) == {"batch_size": 16, "h": 10, "w": 10, "D": 3, "E": -2, "scale": 0.5}
    rewritten = rewrite_constants(source, {"batch_size": 4, "w": 12})
    namespace: dict = {}
    exec(rewritten.replace("import torch", ""), namespace)  # noqa: S102 - our own test source
    assert (namespace["batch_size"], namespace["h"], namespace["w"], namespace["shape"]) == (4, 10, 12, (4, 1))


@pytest.mark.parametrize(("xs", "ns", "expr"), [
    ([64, 1100, 2100], [64, 1100, 2100], "C"),
    ([64, 1100, 2100], [128, 2200, 4200], "2*C"),
    ([64, 1101, 2101], [32, 550, 1050], "C//2"),
    ([64, 1100, 2100], [62, 1098, 2098], "C-2"),
    ([64, 1100, 2100], [193, 3301, 6301], "3*C+1"),
    ([64, 1100, 2100], [7, 7, 8], None),
])
def test_one_constant_sizes_become_expressions(xs, ns, expr):
    assert fit_one("C", xs, ns) == expr


def test_sizes_of_several_constants_are_products_or_sums():
    base = {"A": 4, "B": 6}
    assert fit_many(["A", "B"], base, {"A": (1000, 6000), "B": (900, 3600)}, 24) == "A*B"
    assert fit_many(["A", "B"], base, {"A": (1000, 1006), "B": (900, 904)}, 10) == "A+B"
    assert fit_many(["A", "B"], base, {"A": (1000, 7), "B": (900, 7)}, 24) is None


def test_the_ci_ladder_starts_odd_and_never_exceeds_the_file():
    assert ladder("batch_size", 1024, 11) == [11, 16, 32, 128]
    assert ladder("out_features", 8192, 67) == [67, 72, 96, 128]
    assert ladder("hidden", 40, 67) == [39, 40]
    assert ladder("kernel_size", 3, 67) == [3] and ladder("num_groups", 256, 67) == [256]
    assert ladder("in_channels", 3, 67) == [3]


def test_rendered_yaml_is_a_spec_every_command_reads(tmp_path):
    probe = ProbeResult(
        dims={"B": 128, "C": 64}, constants={"B": "batch", "C": "chans"},
        inputs=[InputFact(name="x", shape=["B", "2*C", 3], dtype="float32", dist="uniform"),
                InputFact(name="idx", shape=["B"], dtype="int64")],
        inits=[InitFact(name="c", value="C"), InitFact(name="eps", value=1e-05), InitFact(name="flag", value=True),
               InitFact(name="shape", value=["C", 1, 1]), InitFact(name="neg", value=-0.5)],
        ci={"B": 11, "C": 7}, unseen=[{"B": 5}], flop="2*B*C", flop_ci=1.0)
    path = tmp_path / "k.yaml"
    path.write_text(render_yaml(Path("k.py"), probe, ["self.conv"]))
    spec = load_spec(path)
    assert list(spec.variants) == ["ci", "bench-gpu"] and spec.variant("ci").dims == {"B": 11, "C": 7}
    assert spec.inputs["x"].shape == ["B", "2*C", 3] and spec.inputs["x"].dist == "uniform"
    assert spec.inputs["idx"].dtype == "int64" and spec.allow_torch == ["self.conv"]
    raw = yaml.safe_load(path.read_text())
    assert raw["inits"][1] == {"eps": 1e-05} and isinstance(raw["inits"][1]["eps"], float)
    assert raw["unseen"] == [{"dims": {"B": 5}}] and raw["ci"][0]["flop"] == "2*B*C"


def test_an_existing_spec_is_kept_unless_forced(tmp_path):
    kernel = tmp_path / "kernel.py"
    shutil.copy(REPO / "examples" / "12_Gemm_Multiply_LeakyReLU" / "kernel.py", kernel)
    (tmp_path / "kernel.yaml").write_text("precious")
    with pytest.raises(InputError, match="exists"):
        init_spec(kernel)
    assert (tmp_path / "kernel.yaml").read_text() == "precious"


def test_a_file_that_is_no_kernel_file_is_bad_input_before_anything_runs(tmp_path):
    bad = tmp_path / "k.py"
    bad.write_text("x = 1\n")
    result = runner.invoke(app, ["spec", "init", str(bad)])
    assert result.exit_code == 2 and "defines no `class Model" in result.output and "Traceback" not in result.output


# ---------------------------------------------------------------- the probe, for real


IMPORT_SPY = '''
import os as _os
with open(_os.environ["XEF_IMPORTED_BY"], "a") as _f:
    _f.write(f"{_os.getpid()}\\n")
'''


@pytest.mark.slow
def test_the_kernel_is_imported_in_another_process_only(tmp_path, monkeypatch):
    folder = tmp_path / "k"
    shutil.copytree(KB / "9_Matmul_Subtract_Multiply_ReLU", folder)
    kernel = folder / "kernel.py"
    kernel.write_text(IMPORT_SPY + kernel.read_text())
    log = tmp_path / "imported.txt"
    monkeypatch.setenv("XEF_IMPORTED_BY", str(log))
    done = init_spec(kernel, check=False)
    pids = set(log.read_text().split())
    assert pids and str(os.getpid()) not in pids
    assert done.probe.constants == {"BATCH_SIZE": "batch_size", "IN_FEATURES": "in_features",
                                    "OUT_FEATURES": "out_features"}


def _init_then_check(folder: Path, tmp_path: Path) -> tuple[dict, str]:
    work = tmp_path / folder.name
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("spec.yaml"))  # examples: start without their spec
    made = runner.invoke(app, ["spec", "init", str(work / "kernel.py"), "--no-check"])
    assert made.exit_code == 0, made.output
    checked = runner.invoke(app, ["check", str(work / "kernel.py"), "--device", "cpu"])  # finds kernel.yaml
    assert checked.exit_code == 0, checked.output
    return yaml.safe_load((work / "kernel.yaml").read_text()), checked.output


@pytest.mark.slow
@pytest.mark.parametrize("name", ["1_Conv2D_ReLU_BiasAdd", "30_Gemm_GroupNorm_Hardtanh"])
def test_spec_init_then_check_passes_on_examples(name, tmp_path):
    spec, output = _init_then_check(REPO / "examples" / name, tmp_path)
    assert "PASSED" in output and "unseen" in output
    assert spec["bench-gpu"][0]["dims"]["BATCH_SIZE"] == (128 if name.startswith("1_") else 1024)
    assert all(v <= 128 for v in spec["ci"][0]["dims"].values())


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in KB.iterdir()))
def test_spec_init_then_check_passes_on_kernelbench_problems_outside_examples(name, tmp_path):
    spec, output = _init_then_check(KB / name, tmp_path)
    assert "PASSED" in output and len(spec["unseen"]) == 2
    ci = spec["ci"][0]["dims"]
    if name.startswith("88_"):  # 256 groups must divide the features: shrunk together, ratio kept
        assert ci["OUT_FEATURES"] % ci["NUM_GROUPS"] == 0 and ci["OUT_FEATURES"] < 8192
    if name.startswith("32_"):
        assert spec["allow_torch"] == ["self.conv"]  # the port keeps the conv in torch


ALIGNED = '''
        assert M % 32 == 0 and N % 32 == 0 and K % 32 == 0, "this port needs sizes that are multiples of 32"
'''


@pytest.mark.slow
def test_a_kernel_that_needs_aligned_sizes_gets_an_aligned_ci(tmp_path):
    folder = tmp_path / "aligned"
    shutil.copytree(KB / "9_Matmul_Subtract_Multiply_ReLU", folder)
    kernel = folder / "kernel.py"
    kernel.write_text(kernel.read_text().replace("        N = w.shape[0]\n", "        N = w.shape[0]\n" + ALIGNED))
    done = init_spec(kernel)
    assert all(v % 32 == 0 for v in done.probe.ci.values()), done.probe.ci
    # the kernel's need is written down, and the verifier's own unseen shapes honour it (and say so)
    assert done.probe.multiple_of and set(done.probe.multiple_of.values()) == {32}, done.probe.multiple_of
    assert "multiple_of:" in done.text
    assert done.verdict is not None and done.verdict.passed, [f.render() for f in done.verdict.findings[:2]]
    assert any("a multiple of 32" in n for n in done.verdict.notes), done.verdict.notes
    grown = [r for r in done.verdict.correctness if r.unseen]
    assert grown and all(v % 32 == 0 for r in grown for d, v in r.dims.items() if d in done.probe.multiple_of)


def test_multiple_of_names_known_dims_with_integer_steps(tmp_path):
    base = "inputs: {X: {shape: [N]}}\nci:\n  - dims: {N: 32}\n"
    for bad, said in (("multiple_of: {M: 32}\n", "which no variant defines"),
                      ("multiple_of: {N: 1}\n", "at least 2"), ("multiple_of: [N]\n", "must be a mapping")):
        path = tmp_path / "s.yaml"
        path.write_text(base + bad)
        with pytest.raises(SpecError, match=said):
            load_spec(path)
    path.write_text(base + "multiple_of: {N: 32}\n")
    spec = load_spec(path)
    assert spec.admits({"N": 64}) and not spec.admits({"N": 72})
