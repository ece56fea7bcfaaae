"""The float64 reference on a trial's own values: the truth the fp32 contract falls back to.

An fp32 candidate may differ from the fp32 reference by more than the tolerance where the reference
itself loses digits (a running mean of large outputs that cancels, a wide trial near the edge of
stability); it passes there if it is as close to the float64 reference on the same values. Those values
are drawn again from each trial's recipe (the draws are seeded and made on the judge's device), so
nothing is kept but the recipe. A call that keeps the state an earlier call left (nothing reloaded)
starts from that call's float64 state, as the candidate's second call starts from its own first.
"""

from __future__ import annotations

from typing import Any

from xe_forge.problem.cases import build_case
from xe_forge.problem.layouts import lay_out
from xe_forge.verify.model_walk import set_training
from xe_forge.verify.stability import Float64Reference


class Float64Truth:
    def __init__(self, device: Any) -> None:
        self.tdev = device
        self.recipes: dict[str, dict[str, tuple]] = {}  # dir -> trial id -> how its inputs were drawn
        self.kept: dict[str, dict[str, str]] = {}  # dir -> trial id -> the earlier call whose state it starts from
        self._twin: tuple[Any, Float64Reference] | None = None  # the float64 copy of the last model asked for

    def twin(self, ref: Any) -> Float64Reference:
        """The float64 copy of `ref`, built once per model."""
        if self._twin is None or self._twin[0] is not ref:
            self._twin = (ref, Float64Reference(ref))
        return self._twin[1]

    def record(self, folder: str, key: str, recipe: tuple, kept_from: str | None = None) -> None:
        """Trial `key`'s recipe (case, model, state, draw, layout, seed, training); `kept_from`: the call whose state
        it starts from, where nothing is reloaded before it."""
        self.recipes.setdefault(folder, {})[key] = recipe
        if kept_from is not None:
            self.kept.setdefault(folder, {})[key] = kept_from

    def outputs(self, folder: str, key: str, problem: Any, start: dict[str, Any] | None = None) -> list[Any] | None:
        """The float64 reference's outputs on trial `key`'s values, from its state or `start`; None where that
        is not possible. `problem` gives the spec and dtype the draws were made with."""
        recipe = self.recipes.get(folder, {}).get(key)
        if recipe is None:
            return None
        case, ref, state, draw, layout, seed, training = recipe
        state = {**state, **start} if start is not None else state
        try:
            inputs = build_case(case.module, problem.spec, case.variant, seed=seed, device=self.tdev,
                                dtype=problem.dtype, int_highs=case.int_highs, **draw).inputs
            if layout:
                inputs = [lay_out(x, layout) for x in inputs]
            set_training(ref, training)  # the twin follows the reference's mode (an eval-mode trial)
            return self.twin(ref).outputs(state, inputs)
        except Exception:
            return None
        finally:
            set_training(ref, True)

    def state_after(self, folder: str, key: str, problem: Any) -> dict[str, Any] | None:
        """The float64 reference's state after trial `key`'s call (chained through a kept earlier call)."""
        earlier = self.kept.get(folder, {}).get(key)
        start = None
        if earlier is not None:
            start = self.state_after(folder, earlier, problem)
            if start is None:
                return None
        if self.outputs(folder, key, problem, start) is None or self._twin is None:
            return None
        return {k: v.detach().clone() for k, v in self._twin[1].model.state_dict().items()}

    def release(self, folder: str) -> None:
        for store in (self.recipes, self.kept):
            store.pop(folder, None)

