"""Interleaved timing of a candidate against a baseline, in the candidate's process, on one device.

Each repetition times both (order alternating), each call after an L2 flush, on fresh inputs drawn
(outside the timed region) from that repetition's secret seed, as the reference process draws them:
no output can be memoised from an earlier call. The speedup is the median of per-pair ratios,
so slow drift of clocks or temperature cancels. A candidate counts as faster only above
max(2%, the measured spread).

Timed calls are checked calls: every timed output is fingerprinted (sum, |sum|, sum of squares,
non-finite count, on the device, after the call's end event) for the reference process to check,
and at secret repetitions the candidate's call instead goes through the full harness (poisoning,
launch count, torch audit) with its whole output kept for comparison; those repetitions are left
out of the statistics. A candidate cannot tell which calls are kept, so one that behaves
differently while timed is caught. The parent holds its own clock around all of this (speed.py).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xe_forge.problem.cases import build_case, model_class, own_dists, redraw
from xe_forge.problem.spec import Spec
from xe_forge.verify import protocol as p
from xe_forge.verify.compare import fingerprint, flatten
from xe_forge.verify.models import Timing
from xe_forge.verify.weights import load_into

MIN_MARGIN = 0.02
WARMUP = 5
POOL = 3  # inputs the warm-up, the probe and the parent's spins rotate through
MAX_REPS = 200


def _quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def choose_reps(one_call_ms: float, budget_ms: float = 1500.0, lo: int = 10, hi: int = MAX_REPS) -> int:
    return int(max(lo, min(hi, budget_ms / max(one_call_ms, 1e-3) / 2)))


def summarize(cand_ms: list[float], base_ms: list[float], ratios: list[float]) -> Timing:
    speedup = statistics.median(ratios)
    spread = (_quantile(ratios, 0.75) - _quantile(ratios, 0.25)) / max(speedup, 1e-9)
    margin = max(MIN_MARGIN, spread)
    return Timing(
        candidate_ms=statistics.median(cand_ms), baseline_ms=statistics.median(base_ms), speedup=speedup,
        spread=spread, margin=margin, faster=speedup > 1.0 + margin, reps=len(ratios),
        candidate_spread_ms=_quantile(cand_ms, 0.75) - _quantile(cand_ms, 0.25),
        baseline_spread_ms=_quantile(base_ms, 0.75) - _quantile(base_ms, 0.25),
    )


class TimingSession:
    """The models of one timing request; spins reuse them for the parent's clock."""

    def __init__(self, runner: Any, req: p.TimePlan) -> None:
        import torch

        self.runner, self.req, self.device = runner, req, runner.device
        self.spec = Spec(**req.spec) if req.spec else None
        self.variant = self.spec.variant(req.variant) if self.spec else None
        state = {k: v.to(runner.tdev) for k, v in torch.load(req.state, map_location="cpu", weights_only=True).items()}
        model, pairs, failure, _ = runner.build("candidate", req.init, req.seed, state)
        self.failure, self.baseline = failure, None
        if model is None:
            return
        load_into(model, state, pairs)
        self.candidate = model
        reference = self.runner.modules["reference"]
        case = build_case(reference, self.spec, self.variant, seed=req.template_seed, device="cpu", dtype=req.dtype)
        self.template = [x.to(runner.tdev) if torch.is_tensor(x) else x for x in case.inputs]
        self.dists = own_dists(reference, self.spec)
        self.pool = [self._inputs(s) for s in req.seeds[:POOL]]
        self.baseline = self._baseline(state)

    def _inputs(self, seed: int) -> list[Any]:
        """A timed call's inputs, drawn from its seed on the device, exactly as the reference process does."""
        return redraw(self.template, seed, self.dists)

    def _baseline(self, state: dict[str, Any]) -> Any:
        import torch

        if self.req.baseline == "input":
            model, pairs, failure, _ = self.runner.build("baseline", self.req.init, self.req.seed, state)
            if model is None:
                self.failure = f"the baseline kernel cannot be built: {failure}"
                return None
            load_into(model, state, pairs)
            return model
        init = torch.load(self.req.init, map_location="cpu", weights_only=True)
        ref = model_class(self.runner.modules["reference"])(*init).to(self.runner.tdev)
        ref.load_state_dict({k: v.to(torch.float32) if v.is_floating_point() else v for k, v in state.items()})
        ref = ref.to(getattr(torch, self.req.dtype))
        if self.req.baseline == "compile":
            with self.runner.current_guard.harness_changes():  # dynamo rebinds torch functions: the harness's doing
                ref = torch.compile(ref)
                self._call(ref, self.pool[0])
        return ref

    @staticmethod
    def _call(model: Any, inputs: list[Any]) -> Any:
        import torch

        with torch.no_grad():
            return model(*inputs)

    def _timed(self, model: Any, inputs: list[Any], keep: list[Any]) -> float:
        def run() -> None:
            keep.append(self._call(model, inputs))

        return self.device.time_ms(run)

    def run(self) -> p.Timed:
        if self.failure or self.baseline is None:
            return p.Timed(failure=self.failure or "no baseline")
        for i in range(WARMUP):
            self._call(self.candidate, self.pool[i % len(self.pool)])
            self._call(self.baseline, self.pool[i % len(self.pool)])
        self.device.synchronize()
        probe = self._timed(self.candidate, self.pool[0], [])
        reps = min(self.req.reps or choose_reps(probe), len(self.req.seeds))
        kept = {int(f * reps) % reps for f in self.req.samples} if reps > 2 else set()
        reply = p.Timed(per_call_ms=probe)
        fps: list[Any] = []
        ratios = []
        for i in range(reps):
            seed = self.req.seeds[i]
            inputs = self._inputs(seed)
            if i in kept:
                self._sample(i, seed, inputs, reply)
                continue
            outs: list[Any] = []
            if i % 2 == 0:
                c = self._timed(self.candidate, inputs, outs)
                b = self._timed(self.baseline, inputs, [])
            else:
                b = self._timed(self.baseline, inputs, [])
                c = self._timed(self.candidate, inputs, outs)
            fps.append(fingerprint(flatten(outs[0])))
            reply.seeds.append(seed)
            reply.candidate_ms.append(c)
            reply.baseline_ms.append(b)
            ratios.append(b / max(c, 1e-9))
        reply.fingerprints = _host(fps)
        reply.timing = summarize(reply.candidate_ms, reply.baseline_ms, ratios)
        return reply

    def _sample(self, i: int, seed: int, inputs: list[Any], reply: p.Timed) -> None:
        import torch

        result, out = self.runner.invoke(self.candidate, inputs, f"sample{i}", allowed=self.req.allowed,
                                         path=self.runner.paths.get("candidate"))
        reply.sample_audits.append(result)
        if out is not None:
            path = str(Path(self.req.sample_dir) / f"timed_{i}.pt")
            torch.save([o.detach().cpu() if torch.is_tensor(o) else o for o in out], path)
            reply.samples.append(p.CompareItem(id=f"seed:{seed}", name=f"sample{i}", output=path))

    def spin(self, req: p.Spin) -> p.Spun:
        """n calls of one side through the timed path; the parent's wall clock is the measurement."""
        model: Callable | None = {"candidate": self.candidate, "baseline": self.baseline}.get(req.which)
        reply = p.Spun()
        fps = []
        for i in range(req.n):
            k = i % len(self.pool)
            outs: list[Any] = []
            if model is None:
                self.device.time_ms(lambda: None)
                continue
            self._timed(model, self.pool[k], outs)
            if req.which == "candidate":
                fps.append(fingerprint(flatten(outs[0])))
                reply.seeds.append(self.req.seeds[k])
        self.device.synchronize()
        reply.fingerprints = _host(fps)
        return reply


def _host(fps: list[Any]) -> list[list[float]]:
    """One device-to-host copy for all fingerprints, after the timed loop (None: no floating output)."""
    import torch

    real = [f for f in fps if f is not None]
    values = iter(torch.stack(real).cpu().tolist() if real else [])
    return [next(values) if f is not None else [0.0, 0.0, 0.0, 0.0] for f in fps]
