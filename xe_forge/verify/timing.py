"""Timing one side in a worker process: the candidate in its own process, a baseline in another.

The parent (speed.py) times the candidate and its baseline in two processes, the candidate's and a
baseline process that never imports the candidate under test, alternating short chunks of
repetitions between them: slow drift of clocks and temperature cancels, and nothing the candidate
does in its process can slow the baseline down. Both sides run this same code, so their paths are
symmetric by construction:
- each repetition draws fresh inputs from its own seed (exactly as the reference process draws them),
  outside the timed region, so no output can be memoised;
- cache flushes are queued (enough that the device's queue outlasts the host's time for the call:
  clock.flush_pad, the same number on both sides), then a device mark, the call, a device mark, then the output's
  fingerprint (after the end mark, outside the interval), as triton.testing.do_bench times a call;
  one synchronize per chunk, so the host runs ahead and the intervals hold device work (plus the
  idle gaps a call's own host code leaves, which are part of its cost);
- on the candidate's side, repetitions the parent chose in secret run under the full harness instead
  (poisoning, launch count, torch audit), their whole output kept for the reference process; they are
  not timed.
Padded spins (`spin`) are the parent's own evidence (clock.py).

Eager and torch.compile baselines run as a user runs them, with torch's default precision flags
(cuDNN may use TF32 for fp32 convolutions); the candidate, and an input kernel as baseline, run the
torch ops they keep in IEEE fp32, as their checked calls do.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from xe_forge.problem.cases import build_case, model_class, own_dists, redraw
from xe_forge.problem.spec import Spec
from xe_forge.verify import protocol as p
from xe_forge.verify.compare import fingerprint, flatten
from xe_forge.verify.model_walk import load_state
from xe_forge.verify.models import Timing
from xe_forge.verify.transport import load_shipped, write_outputs

MIN_MARGIN = 0.02
WARM_MS = 50.0  # warm-up per side: clocks ramp, caches and autotuners settle
WARM_CHUNK_MS = 2.0  # untimed work at the start of a chunk of short calls
MAX_WARM_CALLS = 20
BATCH_BYTES = 2 << 30  # inputs drawn ahead and outputs kept for fingerprints, per batch of repetitions
PROBES = 3
SPIN_FINGERPRINTS = 8


def _quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(cand_ms: list[float], base_ms: list[float]) -> Timing:
    """Median of per-repetition ratios (both sides drew the same inputs); faster only above the noise."""
    ratios = [b / max(c, 1e-9) for c, b in zip(cand_ms, base_ms, strict=True)]
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
    """One side, built and warm, in this process; chunks and spins reuse it."""

    def __init__(self, runner: Any, req: p.TimePrepare) -> None:
        import torch

        self.runner, self.req, self.device = runner, req, runner.device
        self.spec = Spec(**req.spec) if req.spec else None
        self.variant = self.spec.variant(req.variant) if self.spec else None
        self.failure: str | None = None
        _precision_flags(req.side)
        state = {k: v.to(runner.tdev) for k, v in load_shipped(req.state, runner.tdev).items()}
        reference = runner.modules["reference"]
        case = build_case(reference, self.spec, self.variant, seed=req.template_seed, device=runner.tdev,
                          dtype=req.dtype)
        self.template = list(case.inputs)
        self.dists = own_dists(reference, self.spec)
        self.model = self._build(state)
        if self.model is None:
            return
        self.pool = [(s, self._inputs(s)) for s in req.pool]
        self.stand_in = self._warm()
        self.call_ms = self.flush_ms = 0.0
        self.rep_bytes = sum(x.numel() * x.element_size() for x in [*self.template, *self.stand_in]
                             if torch.is_tensor(x))

    # ---------------------------------------------------------------- building

    def _build(self, state: dict[str, Any]) -> Any:
        import torch

        if self.req.side in ("candidate", "input"):
            role = "candidate" if self.req.side == "candidate" else "baseline"
            model, pairs, failure, _ = self.runner.build(role, self.req.init, self.req.seed, state)
            if model is None:
                self.failure = failure if role == "candidate" else f"the baseline kernel cannot be built: {failure}"
                return None
            load_state(model, state, pairs)
            return model
        init = torch.load(self.req.init, map_location="cpu", weights_only=True)
        with torch.device(self.runner.tdev):
            ref = model_class(self.runner.modules["reference"])(*init).to(self.runner.tdev)
        ref.load_state_dict({k: v.to(torch.float32) if v.is_floating_point() else v for k, v in state.items()})
        ref = ref.to(getattr(torch, self.req.dtype))
        if self.req.side == "compile":
            with self.runner.current_guard.harness_changes():  # dynamo rebinds torch functions: the harness's doing
                ref = torch.compile(ref)
                self._call(ref, self._inputs(self.req.pool[0]))
        return ref

    def _inputs(self, seed: int) -> list[Any]:
        """A timed call's inputs, drawn from its seed on the device, exactly as the reference process does."""
        return redraw(self.template, seed, self.dists)

    @staticmethod
    def _call(model: Any, inputs: list[Any]) -> Any:
        import torch

        with torch.no_grad():
            return model(*inputs)

    def _warm(self) -> list[Any]:
        """Calls until the clocks have ramped; returns one output (the null spin fingerprints its shapes)."""
        started, calls, out = time.perf_counter(), 0, []
        while calls < 3 or (time.perf_counter() - started) * 1e3 < WARM_MS:
            out = flatten(self._call(self.model, self.pool[calls % len(self.pool)][1]))
            calls += 1
            if calls % 4 == 0:
                self.device.synchronize()
        self.device.synchronize()
        return out

    def ready(self) -> p.TimeReady:
        if self.failure or self.model is None:
            return p.TimeReady(failure=self.failure or "nothing to time")
        inputs = self.pool[0][1]
        call = [self.device.time_ms(lambda: self._call(self.model, inputs)) for _ in range(PROBES)]
        host = []
        for _ in range(PROBES):  # the host's time to queue a call while the device is busy elsewhere
            for _ in range(20):
                self.device.flush()
            started = time.perf_counter()
            self._call(self.model, inputs)
            host.append((time.perf_counter() - started) * 1e3)
            self.device.synchronize()
        flush = [self._flush_ms() for _ in range(PROBES)]
        self.call_ms, self.flush_ms = statistics.median(call), statistics.median(flush)
        return p.TimeReady(call_ms=self.call_ms, host_ms=statistics.median(host), flush_ms=self.flush_ms)

    def _flush_ms(self) -> float:
        start = self.device.mark()
        self.device.flush()
        end = self.device.mark()
        self.device.synchronize()
        return self.device.elapsed_ms(start, end)

    # ---------------------------------------------------------------- timed chunks and spins

    def chunk(self, req: p.TimeChunk) -> p.Chunk:
        """The chunk's repetitions. Sampled ones first, under the full harness (not timed); then a few
        untimed calls, since the device comes back idle from the other process's chunk at lower
        clocks; then, per batch, every repetition's inputs drawn ahead and a loop that queues only
        flush, mark, call, mark, as do_bench does, so the host stays ahead of even a short call and
        the device does not idle between calls. Fingerprints after the loop, of copies queued right
        after each call into buffers allocated ahead."""
        if self.failure or self.model is None:
            return p.Chunk(failure=self.failure or "nothing to time")
        reply = p.Chunk()
        samples = set(req.samples)
        for rep, seed in zip(req.reps, req.seeds, strict=True):
            if rep in samples:
                self._sample(rep, seed, self._inputs(seed), reply)
        todo = [(r, s) for r, s in zip(req.reps, req.seeds, strict=True) if r not in samples]
        self._warm_chunk()
        per_batch = max(1, int(BATCH_BYTES // max(self.rep_bytes, 1)))
        for start in range(0, len(todo), per_batch):
            ms, fps = self._timed_batch([self._inputs(seed) for _, seed in todo[start:start + per_batch]], req.pad)
            reply.ms += ms
            reply.fingerprints += fps
        return reply

    def _timed_batch(self, batch: list[list[Any]], pad: int = 1) -> tuple[list[float], list[list[float]]]:
        """Each output is copied, right after its call, into a buffer allocated before the loop, and
        dropped: nothing is allocated inside a timed interval but the call's own output, which reuses
        the block the previous call's output freed (an H200 read short calls up to 5x slow, and eager
        with a spread of 19%, while every output was kept alive and each call met a fresh cudaMalloc)."""
        made = [(self.device.new_mark(), self.device.new_mark()) for _ in batch]
        kept = [_like(self.stand_in) for _ in batch]
        marks = []
        for (begin, end), inputs, target in zip(made, batch, kept, strict=True):
            for _ in range(pad):  # the parent's padding (clock.flush_pad): the host stays ahead of a short call
                self.device.flush()
            begin = self.device.mark(begin)
            out = flatten(self._call(self.model, inputs))
            marks.append((begin, self.device.mark(end)))
            _copy_into(target, out)
            del out
        fps = _host([fingerprint(k) for k in kept])
        self.device.synchronize()
        return [self.device.elapsed_ms(a, b) for a, b in marks], fps

    def _warm_chunk(self) -> None:
        if self.call_ms >= WARM_CHUNK_MS:
            return
        warmed, i = 0.0, 0
        while warmed < WARM_CHUNK_MS and i < MAX_WARM_CALLS:
            self.device.flush()
            self._call(self.model, self.pool[i % len(self.pool)][1])
            warmed += self.call_ms + self.flush_ms
            i += 1

    def _sample(self, rep: int, seed: int, inputs: list[Any], reply: p.Chunk) -> None:
        result, out = self.runner.invoke(self.model, inputs, f"sample{rep}", allowed=self.req.allowed,
                                         path=self.runner.paths.get("candidate"))
        reply.sample_audits.append(result)
        if out is not None:
            path = str(Path(self.req.sample_dir) / f"timed_{rep}.pt")
            write_outputs(out, path, ipc=self.runner.tdev.startswith("cuda"))
            reply.samples.append(p.CompareItem(id=f"seed:{seed}", name=f"sample{rep}", output=path))

    def spin(self, req: p.Spin) -> p.Spun:
        """n iterations, each `pad` flushes then the call (or nothing); a fingerprint of the output at a
        few fixed iterations (of a stand-in of the same shapes in the null spin); one synchronize."""
        reply, fps = p.Spun(), []
        if self.failure or self.model is None:
            return p.Spun(error=self.failure or "nothing to spin")
        checked = set(range(0, req.n, max(1, req.n // SPIN_FINGERPRINTS)))
        for i in range(req.n):
            seed, inputs = self.pool[i % len(self.pool)]
            for _ in range(req.pad):
                self.device.flush()
            out = flatten(self._call(self.model, inputs)) if req.which == "candidate" else self.stand_in
            if i in checked:
                fps.append(fingerprint(out))
                reply.seeds.append(seed)
        self.device.synchronize()
        reply.fingerprints = _host(fps) if req.which == "candidate" else []
        reply.seeds = reply.seeds if req.which == "candidate" else []
        return reply


def _like(outputs: list[Any]) -> list[Any]:
    import torch

    return [torch.empty_like(o) if torch.is_tensor(o) else o for o in outputs]


def _copy_into(target: list[Any], out: list[Any]) -> None:
    """A timed output into its buffer; an output of another shape or kind than the stand-in's is kept as
    a copy (and its fingerprint then says whatever it says)."""
    import torch

    for i, o in enumerate(out[:len(target)]):
        t = target[i]
        if torch.is_tensor(o) and torch.is_tensor(t) and o.shape == t.shape and o.dtype == t.dtype:
            t.copy_(o)
        else:
            target[i] = o.detach().clone() if torch.is_tensor(o) else o
    target[len(out):] = []
    target.extend(o.detach().clone() if torch.is_tensor(o) else o for o in out[len(target):])


def _precision_flags(side: str) -> None:
    """Eager and compile as a user runs them (torch's defaults); a kernel's kept torch ops in IEEE fp32."""
    import torch

    user = side in ("eager", "compile")
    torch.backends.cuda.matmul.allow_tf32 = False  # torch's default, and the candidate's
    torch.backends.cudnn.allow_tf32 = user  # torch's default is True


def _host(fps: list[Any]) -> list[list[float]]:
    """One device-to-host copy for all fingerprints, after the loop (None: no floating output)."""
    import torch

    real = [f for f in fps if f is not None]
    values = iter(torch.stack(real).cpu().tolist() if real else [])
    return [next(values) if f is not None else [0.0, 0.0, 0.0, 0.0] for f in fps]
