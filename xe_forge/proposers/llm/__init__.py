"""The LLM proposer: DSPy signatures over any LiteLLM model.

`profile` (what a model is sent, what it costs), `client` (cache, budget, retries, ledger), `errors`
(what a failure means, keys removed), `answers` (a kernel file out of any answer), `proposer`
(CoVeR's generator, analysis, planning), `probe` (doctor's LLM section). The names below load on
first use, so `doctor` without a model never imports DSPy or LiteLLM.
"""

import importlib
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map at import

_EXPORTS = {"LLMAnswer": "client", "LLMCall": "client", "LLMClient": "client", "LLMProposer": "proposer",
            "AnalyzeKernel": "proposer", "OptimizeStage": "proposer", "PlanStages": "proposer",
            "RefineStage": "proposer"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
