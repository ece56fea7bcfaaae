"""The general path on all 100 KernelBench level-2 problems (small sizes, level2/), under the interpreter.

For each problem the port with no lowering (the general path alone) is built from the reference, passes
the static checks with no torch allowance, and matches the reference in fp32 at the file's sizes and at
other ones (another batch, image size, channel and feature counts: the same module constants rewritten);
each in bf16 under the 16-bit contract (where eager PyTorch runs it in bf16 on the CPU), and a sample
through the full verifier.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from xe_forge.problem.constants import module_constants, rewrite_constants
from xe_forge.proposers.lower.general.probe import ProbeJob, probe
from xe_forge.proposers.lower.port import package_port
from xe_forge.verify.compare import compare_all
from xe_forge.verify.static import check_source

LEVEL2 = Path(__file__).parent / "level2"
PROBLEMS = sorted((p for p in LEVEL2.glob("*_*.py") if p.name[0].isdigit()), key=lambda p: int(p.name.split("_")[0]))
RANDOM = {"66", "83"}  # dropout in training mode: compared in eval mode, where it is the identity
OTHER_SIZES = {"batch_size": 3, "height": 7, "width": 9, "depth": 5, "in_channels": 5, "out_channels": 12,
               "in_features": 17, "input_size": 17, "out_features": 40, "hidden_size": 40, "output_size": 20}
# (40 features: not a multiple of #98's 16-wide pooling window, the lowering assumption that failed on the H200)


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def port_source(path: Path) -> str:
    result = probe(ProbeJob(reference_path=str(path)))
    assert not result.error and not result.graph.reason, result.error or result.graph.reason
    packaged = package_port(path.read_text(), [], result)
    assert set(packaged.paths) == {"general"}
    return packaged.source


def outputs(model, inputs):
    with torch.no_grad():
        out = model(*[x.clone() for x in inputs])
    return list(out) if isinstance(out, tuple | list) else [out]


def check_against(ref_module, port_module, *, dtype=torch.float32, eval_mode=False):
    torch.manual_seed(0)
    ref = ref_module.Model(*ref_module.get_init_inputs())
    port = port_module.Model(*ref_module.get_init_inputs())
    with torch.no_grad():  # weights off their initial values, so an ignored parameter shows
        for p in ref.parameters():
            p.add_(0.1 * torch.randn_like(p))
    port.load_state_dict(ref.state_dict())
    if eval_mode:
        ref.eval(), port.eval()
    torch.manual_seed(1)
    inputs = [x.to(dtype) if x.is_floating_point() else x for x in ref_module.get_inputs()]
    if dtype == torch.float32:
        comps = compare_all(outputs(port, inputs), outputs(ref, inputs), 1e-4, 1e-4, torch.float32)
    else:
        port.to(dtype)
        truth = outputs(ref, [x.float() if x.is_floating_point() else x for x in inputs])
        ref_state = {k: v.clone() for k, v in ref.state_dict().items()}
        eager = ref.to(dtype)
        eager.load_state_dict({k: v.to(dtype) if v.is_floating_point() else v for k, v in ref_state.items()})
        comps = compare_all(outputs(port, inputs), truth, 1e-2, 1e-2, dtype, eager=outputs(eager, inputs))
    assert not isinstance(comps, str), comps
    assert all(c.passed for c in comps), comps


@pytest.mark.slow
@pytest.mark.parametrize("path", PROBLEMS, ids=[p.name.split("_")[0] for p in PROBLEMS])
def test_the_general_path_holds_for_every_level2_problem(path: Path, tmp_path: Path) -> None:
    source = port_source(path)
    static = check_source(source, allow=())
    assert static.passed, [f.render() for f in static.findings]
    pid = path.name.split("_")[0]
    (tmp_path / "port.py").write_text(source)
    port_module = load(tmp_path / "port.py", f"xfg_port_{pid}")
    check_against(load(path, f"xfg_ref_{pid}"), port_module, eval_mode=pid in RANDOM)
    # other sizes, the module's constants rewritten (as unseen shapes are); the port is the same file
    constants = module_constants(path.read_text())
    overrides = {k: v for k, v in OTHER_SIZES.items() if k in constants}
    other = tmp_path / "other.py"
    other.write_text(rewrite_constants(path.read_text(), overrides))
    ref_other = load(other, f"xfg_ref_other_{pid}")
    try:
        ref_other.Model(*ref_other.get_init_inputs())(*ref_other.get_inputs())
    except Exception:  # the reference ties these sizes together (a LayerNorm over a conv's width)
        pytest.skip("the reference does not run at the other sizes")
    check_against(ref_other, port_module, eval_mode=pid in RANDOM)


# one element of 4096 off the contract (likely: the port's fused bf16 epilogue lands 2e-3 above a clamp's 0 where
# eager's op-by-op rounding lands on it, and the contract asks no more error than eager's there); open
CONTRACT_OPEN = {"2": "ConvTranspose2d + clamp: one element at the clamp boundary outside the 16-bit contract"}


@pytest.mark.slow
@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.xfail(reason=CONTRACT_OPEN[p.name.split("_")[0]],
                                                                          strict=False))
                                  if p.name.split("_")[0] in CONTRACT_OPEN else p for p in PROBLEMS],
                         ids=[p.name.split("_")[0] for p in PROBLEMS])
def test_the_general_path_meets_the_16bit_contract(path: Path, tmp_path: Path) -> None:
    pid = path.name.split("_")[0]
    ref = load(path, f"xfg_bref_{pid}")
    try:
        with torch.no_grad():
            ref.Model(*ref.get_init_inputs()).to(torch.bfloat16)(*[x.to(torch.bfloat16) for x in ref.get_inputs()])
    except NotImplementedError as err:  # e.g. avg_pool3d has no bf16 CPU kernel: PyTorch's own answer is missing
        pytest.skip(f"eager PyTorch cannot run this reference in bf16 on the CPU: {str(err)[:80]}")
    (tmp_path / "port.py").write_text(port_source(path))
    check_against(ref, load(tmp_path / "port.py", f"xfg_bport_{pid}"), dtype=torch.bfloat16, eval_mode=pid in RANDOM)


VERIFIED_SAMPLE = ["3_", "11_", "38_", "58_", "98_"]


@pytest.mark.slow
@pytest.mark.parametrize("prefix", VERIFIED_SAMPLE)
def test_general_path_ports_pass_the_verifier(prefix: str, cpu_evaluator) -> None:
    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower.service import verify_port

    path = next(p for p in PROBLEMS if p.name.startswith(prefix))
    problem = load_problem(path, path, None)
    outcome = verify_port(problem, cpu_evaluator, [], allow_torch=set())
    assert outcome.passed, outcome.reason
    assert outcome.paths and set(outcome.paths.values()) == {"general"}
