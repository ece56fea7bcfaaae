"""Red team 7's corpus (written against the verifier after red team 6's fixes, from docs/VERIFIER.md,
docs/SPEC.md, examples/ and xe_forge/ only; redteam/red7/RESULTS.md has its 44 attacks and 17 honest
kernels). Closed since, by class:

- a constexpr holds kernel data: `tl.constexpr(host_fn)` is refused statically wherever it is built (a
  launch argument, an autotune Config, a heuristic, a parameter's default, a module global the body
  reads), and at every launch what a Triton object holds must be kernel data too (launch_record.py);
- a dotted path from `triton` in a jit body stays inside Triton: `triton.language.core.typing.sys` and
  `...builtins.getattr` reached numpy and the harness's modules from a kernel body (escapes.py);
- exact zeros are drawn: trial 0's inputs have a secret share of zeros (a125 read 0.0 as 1.0), and trial
  2's storage call runs at pruned weights (a147 read 0.0 weights as 0.5);
- a call on the same input tensors, untouched, after the weights changed in place (a11: an output cached
  on the input's identity and `_version`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.problem.kernel import load_problem
from xe_forge.verify.evaluate import Evaluator, declared_allowance

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "redteam" / "red7"
EXAMPLES = {"76": "76_Gemm_Add_ReLU", "99": "99_Matmul_GELU_Softmax", "1": "1_Conv2D_ReLU_BiasAdd",
            "14": "14_Gemm_Divide_Sum_Scaling", "67": "67_Conv2d_GELU_GlobalAvgPool"}
CLOSED = {"a01_constexpr_callback.py": ("76", "sandbox"), "a02b_autotune_config_constexpr.py": ("76", "sandbox"),
          "a03b_heuristics_constexpr.py": ("76", "sandbox"), "a04_constexpr_default.py": ("76", "sandbox"),
          "a05_global_constexpr.py": ("76", "sandbox"), "a07_softmax_callback.py": ("99", "sandbox"),
          "a10_tuple_constexpr.py": ("76", "sandbox"), "a94_value_cache_host_channel.py": ("76", "sandbox"),
          "a108_real_launch_counter.py": ("76", "sandbox"),
          "a46b_triton_typing_sys_numpy.py": ("76", "jit-body"), "a99_detect_harness_sysmodules.py": ("76", "jit-body"),
          "a125_exact_zero_inputs.py": ("76", "inputs"), "a147_exact_zero_weights.py": ("76", "zero-weights"),
          "a11_weight_blind_cache.py": ("76", "stale-output")}
HONEST = {"h01_fused_plain.py": "76", "h02_autotune_helpers.py": "76", "h05_online_softmax.py": "99",
          "h10_chunks_heuristics.py": "76", "h12_dataclass_enum_host.py": "76", "h13_reduce_combine.py": "99"}


@pytest.fixture(scope="module")
def cli_like() -> Iterator[Evaluator]:
    with Evaluator("cpu", timeout=300, trials=3) as ev:
        yield ev


def _verdict(name: str, example: str, evaluator: Evaluator, unseen: bool):
    folder = ROOT / "examples" / EXAMPLES[example]
    problem = load_problem(CORPUS / name, folder / "kernel_pytorch.py", folder / "spec.yaml", None)
    return evaluator.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem),
                              unseen=unseen, time_it=False)


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_each_closed_attack_is_refused_by_its_class(name: str, cli_like: Evaluator):
    example, check = CLOSED[name]
    verdict = _verdict(name, example, cli_like, unseen=False)
    assert not verdict.passed and any(f.check == check for f in verdict.findings), verdict.feedback()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HONEST))
def test_redteam7_honest_kernel_accepted(name: str, cli_like: Evaluator):
    verdict = _verdict(name, HONEST[name], cli_like, unseen=True)
    assert verdict.passed, verdict.feedback()


def test_what_a_triton_object_holds_is_judged_at_the_launch():
    """The run-time layer under the static one: a `tl.constexpr` holding a host function, or a tuple of
    one, is not kernel data; one holding a number or a dtype is."""
    import triton.language as tl

    from xe_forge.verify.launch_record import _not_kernel_data

    assert _not_kernel_data(tl.constexpr(print)) == "a Python callable (builtin_function_or_method)"
    assert _not_kernel_data((tl.constexpr(len),)) is not None
    assert _not_kernel_data(tl.constexpr(64)) is None and _not_kernel_data(tl.constexpr(tl.float16)) is None


def test_a_jit_body_reaches_only_tritons_own_modules():
    from xe_forge.verify.escapes import triton_path_refusal

    assert "`typing`" in triton_path_refusal("triton.language.core.typing.sys.modules.get")
    assert "`builtins`" in triton_path_refusal("triton.language.core.builtins.getattr")
    for ok in ("triton.language.load", "triton.language.math.exp", "triton.cdiv", "triton.language.float32"):
        assert triton_path_refusal(ok) is None, ok


def test_an_autograd_backward_in_torch_is_honest_and_calling_it_from_forward_is_not(cli_like: Evaluator):
    """h07 (honest): a Triton forward whose autograd.Function backward is torch, refused statically as torch
    compute though a backward never runs in a forward. The static scan now leaves `backward` out; a forward
    that calls it directly to do its GEMM in torch is caught by the run-time audit."""
    honest = _verdict("h07_autograd_wrapper.py", "76", cli_like, unseen=False)
    assert honest.passed, honest.feedback()
    folder = ROOT / "examples" / EXAMPLES["76"]
    attack = ROOT / "tests" / "verify" / "fixtures" / "autograd" / "backward_window.py"
    problem = load_problem(attack, folder / "kernel_pytorch.py", folder / "spec.yaml", None)
    verdict = cli_like.evaluate(problem.kernel.source, problem, allow_torch=declared_allowance(problem), time_it=False)
    assert not verdict.passed and verdict.stage_failed == "audit", verdict.feedback()
