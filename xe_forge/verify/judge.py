"""The reference process: weights, inputs, expected outputs and comparisons, where no candidate runs.

It imports the reference (never a candidate), builds the reference model from the parent's secret
seeds, writes what the candidate needs (constructor args, state dicts, inputs) into the evaluation's
directory, and keeps what decides the verdict (expected outputs, the inputs as sent) in its own
memory. It never reads back a file it wrote: the candidate's process can write there too.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

from xe_forge.problem.cases import (
    build_case,
    describe_dists,
    import_from_path,
    inputs_from_module,
    model_class,
    own_dists,
    redraw,
)
from xe_forge.problem.spec import Spec, Variant
from xe_forge.verify import protocol as p
from xe_forge.verify.compare import (
    compare_all,
    degenerate_flags,
    fingerprint_matches,
    flatten,
    run_dtype,
    same_outputs,
    tolerance,
)
from xe_forge.verify.models import Finding
from xe_forge.verify.shapes import ShapeCase, plan_shapes
from xe_forge.verify.weights import perturbed, with_one_moved

OUTPUT_SLACK = 4  # an output file may be at most this many times the expected bytes (plus 1 MiB)


class BadInput(Exception):
    """The reference (not the candidate) cannot run: the problem itself is broken."""


def describe(exc: BaseException, limit: int = 600) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + " ..."


class _Problem:
    def __init__(self, req: p.Load, module: ModuleType) -> None:
        self.key = req.model_dump_json()
        self.module = module
        self.spec = Spec(**req.spec) if req.spec else None
        self.variant: Variant | None = self.spec.variant(req.variant) if self.spec else None
        self.precision = req.precision
        self.dtype = run_dtype(self.variant.dtype if self.variant else None, req.precision)
        self.rtol, self.atol = tolerance(self.dtype, req.precision, self.variant.rtol if self.variant else None,
                                         self.variant.atol if self.variant else None)
        label = self.spec.variant_name(req.variant) if self.spec else "default"
        main = p.ShapeInfo(key="main", label=label, dims=dict(self.variant.dims) if self.variant else {})
        self.shapes: dict[str, ShapeCase] = {"main": ShapeCase(info=main, module=module, variant=self.variant)}
        self.planned: p.Planned | None = None


class Judge:
    """Serves the parent's requests for one problem at a time (the last one loaded stays warm)."""

    def __init__(self, device: Any) -> None:
        import torch

        self.device = device
        self.tdev = device.torch_device()
        torch.backends.cuda.matmul.allow_tf32 = False  # the reference is IEEE fp32 whatever the contract
        torch.backends.cudnn.allow_tf32 = False
        self.problem: _Problem | None = None
        self.expected: dict[str, dict[str, list[Any]]] = {}  # dir -> trial id -> outputs (CPU)
        self.sent: dict[str, dict[str, list[Any]]] = {}  # dir -> trial id -> inputs as sent (CPU)
        self.weights: dict[str, dict[str, str]] = {}  # dir -> trial id -> weights label
        # dir -> shape -> weights label -> reference state / dir -> shape -> the reference model built there
        self.states: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self.models: dict[str, dict[str, Any]] = {}

    def handle(self, req: Any) -> p.Reply:
        handlers = {"load": self.load, "plan_unseen": self.plan_unseen, "prepare": self.prepare,
                    "compare": self.compare, "check_timed": self.check_timed,
                    "release": self.release}
        return handlers[req.op](req)

    # ---------------------------------------------------------------- problem and shapes

    def load(self, req: p.Load) -> p.Loaded:
        if self.problem is None or self.problem.key != req.model_dump_json():
            try:
                module = import_from_path(req.reference_path, "reference")
            except Exception as exc:
                return p.Loaded(bad_input=f"the reference does not import: {describe(exc)}")
            self.problem = _Problem(req, module)
        prob = self.problem
        return p.Loaded(main=prob.shapes["main"].info, dtype=prob.dtype, rtol=prob.rtol, atol=prob.atol,
                        dists=describe_dists(prob.module, prob.spec))

    def plan_unseen(self, req: p.PlanUnseen) -> p.Planned:
        prob = self._problem()
        if prob.planned is None:
            cases, frozen = plan_shapes(prob.module, prob.spec, prob.variant, Path.cwd())
            for case in cases:
                prob.shapes[case.info.key] = case
            prob.planned = p.Planned(shapes=[c.info for c in cases], frozen=frozen)
        return prob.planned

    def _problem(self) -> _Problem:
        if self.problem is None:
            raise RuntimeError("no problem loaded")
        return self.problem

    # ---------------------------------------------------------------- trials

    def prepare(self, req: p.Prepare) -> p.Prepared:
        import torch

        prob = self._problem()
        case = prob.shapes[req.shape]
        folder = Path(req.dir)
        try:
            init = self._init_args(case)
            torch.manual_seed(req.weight_seed)
            ref = model_class(case.module)(*init).to(self.tdev)
        except Exception as exc:
            return p.Prepared(bad_input=f"the reference Model cannot be built at {case.info.label}: {describe(exc)}")
        self.models.setdefault(req.dir, {})[req.shape] = ref
        initial = {k: v.detach().clone() for k, v in ref.state_dict().items()}
        used = {t.weights for t in req.trials}
        moved = perturbed(initial, req.perturb_seed) if used != {"initial"} else initial
        states = {"initial": initial, "perturbed": moved}
        for label in used - set(states):  # "perturbed:<entry>": only that entry moved (a diagnosis)
            states[label] = with_one_moved(initial, moved, label.split(":", 1)[1])
        out = p.Prepared(init=str(folder / f"{req.shape}_init.pt"),
                         params=[k for k in initial if torch.is_tensor(initial[k]) and not torch.equal(initial[k],
                                                                                                     moved[k])])
        torch.save(list(init), out.init)
        tdtype = getattr(torch, prob.dtype)
        ref_states = self.states.setdefault(req.dir, {}).setdefault(req.shape, {})
        for label in used:
            shipped = {k: (v.to(tdtype) if v.is_floating_point() else v) for k, v in states[label].items()}
            ref_states[label] = {k: (v.to(torch.float32) if v.is_floating_point() else v) for k, v in shipped.items()}
            out.states[label] = str(folder / f"{req.shape}_state_{_safe(label)}.pt")
            torch.save({k: v.cpu() for k, v in shipped.items()}, out.states[label])
        for trial in req.trials:
            try:
                inputs, want, dist = self._trial(prob, case, ref, ref_states[trial.weights], trial)
            except BadInput as exc:
                return p.Prepared(bad_input=str(exc))
            if dist != trial.dist:
                out.notes.append(f"{case.info.label}: signed inputs replaced by the problem's own: the reference is "
                                 "not finite on them")
            self.expected.setdefault(req.dir, {})[trial.id] = want
            self.sent.setdefault(req.dir, {})[trial.id] = inputs
            self.weights.setdefault(req.dir, {})[trial.id] = trial.weights
            out.inputs[trial.id] = str(folder / f"{req.shape}_in_{trial.id}.pt")
            out.dists[trial.id] = dist
            torch.save(inputs, out.inputs[trial.id])
        return out

    def _init_args(self, case: ShapeCase) -> list[Any]:
        prob = self._problem()
        if prob.spec is not None and case.variant is not None:
            return build_case(case.module, prob.spec, case.variant, seed=0, device="cpu").init_args
        return inputs_from_module(case.module, 0)[1]

    def _trial(self, prob: _Problem, case: ShapeCase, ref: Any, state: dict[str, Any], trial: p.TrialPlan):
        """Inputs for one trial and the reference's outputs on them; signed falls back when not finite."""
        dist = trial.dist
        for attempt in (dist, "problem"):
            try:
                inputs = build_case(case.module, prob.spec, case.variant, seed=trial.seed, device="cpu",
                                    dtype=prob.dtype, dist=attempt).inputs
            except Exception as exc:
                raise BadInput(f"cannot build inputs for {case.info.label}: {describe(exc)}") from exc
            want = self._reference(ref, state, inputs, case)
            if attempt == "problem" or _finite(want):
                return inputs, want, attempt
        raise AssertionError("unreachable")

    def _reference(self, ref: Any, state: dict[str, Any], inputs: list[Any], case: ShapeCase) -> list[Any]:
        """The reference in fp32 on exactly the (possibly rounded) values the candidate gets."""
        import torch

        ref.load_state_dict(state)
        args = [x.to(self.tdev).float() if torch.is_tensor(x) and x.is_floating_point()
                else (x.to(self.tdev) if torch.is_tensor(x) else x) for x in inputs]
        try:
            with torch.no_grad():
                out = ref(*args)
        except Exception as exc:
            raise BadInput(f"the reference fails on its own inputs ({case.info.label}): {describe(exc)}") from exc
        return [o.detach().cpu() if torch.is_tensor(o) else o for o in flatten(out)]

    # ---------------------------------------------------------------- comparisons

    def compare(self, req: p.Compare) -> p.Compared:
        import torch

        prob = self._problem()
        tdtype = getattr(torch, prob.dtype)
        expected, sent = self.expected.get(req.dir, {}), self.sent.get(req.dir, {})
        reply = p.Compared()
        for item in req.items:
            want = expected[item.id]
            got = _load_outputs(item.output, want)
            key = item.name or item.id
            if isinstance(got, str):
                reply.results[key] = p.ItemResult(findings=[Finding(check="outputs", message=got)])
                continue
            if item.against is not None:
                other = _load_outputs(item.against, want)
                reply.ghost_changed[key] = isinstance(other, str) or not same_outputs(got, other, prob.rtol, prob.atol)
                continue
            comps = compare_all(got, want, prob.rtol, prob.atol, tdtype)
            result = (p.ItemResult(findings=[Finding(check="outputs", message=comps)]) if isinstance(comps, str)
                      else p.ItemResult(comparisons=comps, passed=all(c.passed for c in comps)))
            if item.after is not None:
                result.findings += _mutations(item.after, sent[item.id])
                result.passed = result.passed and not result.findings
            reply.results[key] = result
        reply.degenerate = self._degenerate(req, expected, prob)
        return reply

    def _degenerate(self, req: p.Compare, expected: dict[str, list[Any]], prob: _Problem) -> list[str]:
        """Flags that hold at every weights tried stand alone; the others say where they hold."""
        weights = self.weights.get(req.dir, {})
        where: dict[str, list[str]] = {}
        for a, b in req.degenerate:
            for flag in degenerate_flags(expected[a], expected[b], prob.rtol, prob.atol):
                where.setdefault(flag, []).append(weights.get(a, "initial"))
        tried = {weights.get(a, "initial") for a, _ in req.degenerate}
        return [flag if set(at) == tried else f"{flag} at the {' and '.join(at)} weights" for flag, at in where.items()]

    # ---------------------------------------------------------------- timed outputs

    def _seeded(self, folder: str, req: p.CheckTimed, seed: int) -> list[Any]:
        """The reference's outputs on the inputs a timed call drew from `seed`, at the initial weights."""
        import torch

        key = f"seed:{seed}"
        expected = self.expected.setdefault(folder, {})
        if key not in expected:
            prob = self._problem()
            case = prob.shapes[req.shape]
            template = build_case(case.module, prob.spec, case.variant, seed=req.template_seed, device="cpu",
                                  dtype=prob.dtype).inputs
            template = [x.to(self.tdev) if torch.is_tensor(x) else x for x in template]
            inputs = redraw(template, seed, own_dists(case.module, prob.spec))
            expected[key] = self._reference(self.models[folder][req.shape], self.states[folder][req.shape]["initial"],
                                            inputs, case)
        return expected[key]

    def check_timed(self, req: p.CheckTimed) -> p.TimedChecked:
        prob = self._problem()
        reply = p.TimedChecked()
        for n, (fp, s) in enumerate(zip(req.fingerprints, req.seeds, strict=True)):
            want = self._seeded(req.dir, req, s)
            if not fingerprint_matches(fp, want, prob.rtol, prob.atol):
                reply.bad_fingerprints.append(n)
            self.expected[req.dir].pop(f"seed:{s}", None)
        for item in req.samples:
            self._seeded(req.dir, req, int(item.id.split(":", 1)[1]))
        sample = self.compare(p.Compare(dir=req.dir, items=req.samples))
        reply.samples = [sample.results[s.name or s.id] for s in req.samples]
        return reply

    def release(self, req: p.Release) -> p.Released:
        for store in (self.expected, self.sent, self.weights, self.states, self.models):
            store.pop(req.dir, None)
        return p.Released()


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label)


def _finite(outputs: list[Any]) -> bool:
    import torch

    return all(bool(torch.isfinite(o).all()) for o in outputs if torch.is_tensor(o) and o.is_floating_point())


def _load_outputs(path: str, want: list[Any]) -> list[Any] | str:
    """The candidate's outputs, refusing anything but a list of plain tensors and numbers of sane size."""
    import torch

    if not os.path.isfile(path):
        return "the candidate produced no output"
    limit = OUTPUT_SLACK * sum(w.numel() * 8 for w in want if torch.is_tensor(w)) + (1 << 20)
    if os.path.getsize(path) > limit:
        return "the candidate's output is far larger than the reference's"
    try:
        got = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        return f"the candidate's output cannot be read: {describe(exc, 200)}"
    if not isinstance(got, list):
        return "the candidate's output is not a list of tensors"
    return got


def _mutations(path: str, sent: list[Any]) -> list[Finding]:
    import torch

    try:
        after = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:
        return [Finding(check="input-mutation", message="the inputs after the call cannot be read back")]
    out = []
    for i, (x, s) in enumerate(zip(after, sent, strict=False)):
        if torch.is_tensor(s) and (not torch.is_tensor(x) or x.shape != s.shape or not torch.equal(x, s)):
            out.append(Finding(check="input-mutation", message=f"forward modified input {i} in place"))
    return out


__all__ = ["Judge", "BadInput"]
