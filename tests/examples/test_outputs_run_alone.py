"""An optimized file runs as written wherever its input ran: here, Triton's interpreter on the CPU under a
plain `python` that never imports xe-forge (so none of its patches, e.g. the autotuner's benchmark in
targets/cpu.py, are there), matching the PyTorch reference.

The examples are optimized with the offline rules engine (fusion, autotuning: @triton.autotune outputs),
then each output.py is run in a fresh process with PYTHONPATH unset and this repository off sys.path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xe_forge.config import RunRequest, Settings
from xe_forge.pipeline.progress import Progress
from xe_forge.pipeline.run import optimize
from xe_forge.problem.kernel import load_problem
from xe_forge.problem.spec import init_args, input_shapes

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ["12_Gemm_Multiply_LeakyReLU", "99_Matmul_GELU_Softmax"]
# larger than ci, so several autotune configs survive the shape pruning and the autotuner must pick one (at ci
# sizes one config fits and nothing is benchmarked); a user's own sizes are larger still
SIZES = {"BATCH": 70, "OUT_FEAT": 130}

ALONE = r"""
import importlib.util, json, sys
repo = sys.argv[1]
# the repository off the path, but not a virtual environment that lives inside it (CI's .ci-venv)
sys.path = [p for p in sys.path if p not in ("", ".") and (not p.startswith(repo) or "site-packages" in p)]
import torch

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

case = json.loads(sys.argv[2])
out, ref = load(case["output"], "output"), load(case["reference"], "reference")
torch.manual_seed(0)
want_model = ref.Model(*case["init"])
got_model = out.Model(*case["init"])
got_model.load_state_dict(want_model.state_dict())
inputs = [torch.rand(shape) for shape in case["shapes"]]
with torch.no_grad():
    got, want = got_model(*inputs), want_model(*inputs)
assert torch.allclose(got, want, rtol=1e-3, atol=1e-3), (got - want).abs().max()
assert not any(name == "xe_forge" or name.startswith("xe_forge.") for name in sys.modules), "xe-forge was imported"
print("RAN", "autotune" in open(case["output"]).read())
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_an_optimized_example_runs_under_plain_python_on_the_interpreter(name: str, tmp_path: Path):
    kernel = REPO / "examples" / name / "kernel.py"
    request = RunRequest(kernel=str(kernel), device="cpu", engine="rules", stages="fusion,autotuning", trials=1,
                         run_dir=tmp_path / "runs")
    result = optimize(request, Settings(_env_file=None), progress=Progress(quiet=True))
    assert result.exit_code == 0 and not result.report.unchanged, result.report.headline
    output = Path(result.run_dir) / "output.py"
    assert "@triton.autotune" in output.read_text(), "the case this test is for: an autotuned output"
    problem = load_problem(kernel)
    variant = problem.variant_entry()
    variant = variant.model_copy(update={"dims": {**variant.dims, **SIZES}})
    case = {"output": str(output), "reference": str(problem.reference.path), "init": init_args(problem.spec, variant),
            "shapes": [list(s) for s in input_shapes(problem.spec, variant).values()]}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"TRITON_INTERPRET": "1"}
    ran = subprocess.run([sys.executable, "-c", ALONE, str(REPO), json.dumps(case)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "RAN True" in ran.stdout
