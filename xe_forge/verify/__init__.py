"""The verifier: static checks, sandboxed correctness against the reference, interleaved timing."""

from xe_forge.verify.evaluate import Evaluator, input_allowance
from xe_forge.verify.models import Finding, Verdict

__all__ = ["Evaluator", "Finding", "Verdict", "input_allowance"]
