"""The general path for the accept problems' references, through the verifier with their own specs.

On the H200 the `port` candidate for benchmarks/problems/accept/2_Conv2d_GroupNorm_Scale_MaxPool_Clamp
(the lowering alone) was rejected at unseen channels; since issue 27 every port has a general path.
Here the port with no lowering (the general path alone) meets the spec's ci shape and every unseen
shape the verifier plans (channels, kernel size, pool window, batch and image size changed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ACCEPT = Path(__file__).parents[3] / "benchmarks/problems/accept"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["2_Conv2d_GroupNorm_Scale_MaxPool_Clamp"])
def test_the_general_path_passes_the_verifier_at_unseen_shapes(name: str, cpu_evaluator) -> None:  # noqa: ANN001
    from xe_forge.problem.kernel import load_problem
    from xe_forge.proposers.lower.service import verify_port

    folder = ACCEPT / name
    reference = folder / "kernel_pytorch.py"
    problem = load_problem(reference, reference, folder / "spec.yaml", "ci")
    outcome = verify_port(problem, cpu_evaluator, [], allow_torch=set(), time_it=False)
    assert outcome.passed, outcome.reason
    unseen = [v for v in outcome.paths if v.startswith("unseen")]
    assert len(unseen) >= 2 and set(outcome.paths.values()) == {"general"}, outcome.paths
