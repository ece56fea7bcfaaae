"""The reference process: weights, inputs, expected outputs and comparisons, where no candidate runs.

It imports the reference (never a candidate), builds the reference model from the parent's secret
seeds, writes what the candidate needs (constructor args, state dicts, inputs) into the evaluation's
directory, and keeps what decides the verdict (the expected outputs) in its own memory, on the device
where the comparisons run. It never reads back a file it wrote: the candidate's process can write there too.
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import ModuleType
from typing import Any

from xe_forge.problem.cases import (
    build_case,
    describe_dists,
    import_from_path,
    inputs_from_module,
    own_dists,
    redraw,
)
from xe_forge.problem.layouts import lay_out
from xe_forge.problem.spec import Spec, Variant, init_args
from xe_forge.verify import protocol as p
from xe_forge.verify.budget import counted_families
from xe_forge.verify.compare import (
    compare_all,
    degenerate_flags,
    fingerprint_matches,
    flatten,
    run_dtype,
    same_outputs,
    tolerance,
)
from xe_forge.verify.draws import attempts, build_reference, signed_state
from xe_forge.verify.int_ranges import int_highs
from xe_forge.verify.model_walk import set_training
from xe_forge.verify.models import CONSTANT_REFERENCE, Finding
from xe_forge.verify.shapes import ShapeCase, plan_shapes
from xe_forge.verify.stability import conditioned, finite, jittered, stable, varies
from xe_forge.verify.state_check import Expected, sent_state_findings
from xe_forge.verify.transport import Shipment, load_outputs
from xe_forge.verify.truth import Float64Truth
from xe_forge.verify.weights import pruned, with_one_moved


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
        self.planned: dict[tuple[int, ...], p.Planned] = {}


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
        self.weights: dict[str, dict[str, str]] = {}  # dir -> trial id -> weights label
        # dir -> shape -> weights label -> reference state / dir -> shape -> the reference model built there
        self.states: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self.models: dict[str, dict[str, Any]] = {}
        self.templates: dict[str, dict[tuple[str, int], list[Any]]] = {}  # dir -> (shape, seed) -> timed inputs
        _warm_meta()
        self.truth = Float64Truth(self.tdev)  # the float64 reference on each trial's values (the fp32 contract)
        self.post: dict[str, dict[str, Expected]] = {}  # dir -> trial id -> the reference's state after its call
        self._post: Expected | None = None
        self.eager: dict[str, dict[str, list[Any]]] = {}  # dir -> trial id -> reference run in a 16-bit dtype
        self.in_dtype: dict[tuple[int, str], Any] = {}  # (id of a reference model, dtype) -> its copy in that dtype
        self.shipment = Shipment()  # inputs and weights for the runner (CUDA IPC from a private pool, else files)
        self._recipe: tuple = ()

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
        key = (tuple(sorted(set(req.tiles))), req.seed)  # each kernel's own tiles and secret: a plan per pair
        if key not in prob.planned:
            cases, frozen = plan_shapes(prob.module, prob.spec, prob.variant, Path.cwd(), list(key[0]), req.seed)
            for case in cases:
                prob.shapes[case.info.key] = case
            prob.planned[key] = p.Planned(shapes=[c.info for c in cases], frozen=frozen)
        return prob.planned[key]

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
        try:  # at unseen shapes the literal float constructor args move: a kernel must read them
            ref, init = build_reference(case.module, self._init_args(case), req.weight_seed, self.tdev, case.info.unseen)
        except Exception as exc:
            return p.Prepared(bad_input=f"the reference Model cannot be built at {case.info.label}: {describe(exc)}")
        self.models.setdefault(req.dir, {})[req.shape] = ref
        initial = {k: v.detach().clone() for k, v in ref.state_dict().items()}
        used = {t.weights for t in req.trials}
        moved = self._signed(ref, case, initial, req.perturb_seed, any(t.eval for t in req.trials)) \
            if used != {"initial"} else initial
        states = {"initial": initial, "perturbed": moved}
        if "pruned" in used:  # exact zeros in the weights, where the reference stays finite and stable on them
            states["pruned"] = self._pruned(ref, case, moved, req.perturb_seed)
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
            self.shipment.write(shipped, out.states[label], req.dir)
        if case.int_highs is None:
            case.int_highs = int_highs(prob.spec, case, ref, self.tdev, prob.dtype)
        try:
            return self._trials(req, prob, case, ref, ref_states, out)
        finally:
            set_training(ref, True)  # timed calls and later shapes run as the model was built

    def _trials(self, req: p.Prepare, prob: _Problem, case: ShapeCase, ref: Any, ref_states: dict[str, Any],
                out: p.Prepared) -> p.Prepared:
        folder = Path(req.dir)
        made: dict[str, tuple[list[Any], str, tuple, int]] = {}  # trial id -> its inputs, dist, recipe, seed
        counted = False
        for trial in req.trials:
            set_training(ref, not trial.eval)  # every run of this trial's reference (and of its twins) in its mode
            seed = trial.seed
            start = ref_states[trial.weights]
            if trial.keep and trial.same in made:  # nothing reloaded: the state that trial's call left
                start = {**start, **self.post[req.dir][trial.same].after}
            try:
                if trial.same in made:  # the runner calls on that trial's tensors again, at these weights
                    inputs, dist, recipe, seed = made[trial.same]
                    want = self._reference(ref, start, inputs, case)
                    self._recipe = (*recipe[:2], start, *recipe[3:])
                else:
                    inputs, want, dist = self._trial(prob, case, ref, start, trial)
                made[trial.id] = (inputs, dist, self._recipe, seed)
                if not counted:  # the budget of allowed torch work where no input kernel sets one: one forward's
                    # own (a trial may run the reference again to judge its stability; those runs are not its work)
                    with counted_families() as flops:
                        self._reference(ref, start, inputs, case)
                    out.reference_flops, counted = flops, True
            except BadInput as exc:
                if trial.eval:  # a reference that is itself a kernel (no PyTorch reference) may decline eval mode
                    out.eval_refused = str(exc)
                    continue
                return p.Prepared(bad_input=str(exc))
            if dist != trial.dist:
                out.notes.append(f"{case.info.label}: signed inputs replaced by the problem's own: the reference is "
                                 "not finite on them")
            self.expected.setdefault(req.dir, {})[trial.id] = want
            self.truth.record(req.dir, trial.id, (*self._recipe, seed, not trial.eval),
                              trial.same if trial.keep and trial.same in made else None)
            self.post.setdefault(req.dir, {})[trial.id] = self._post
            self._keep_eager(req.dir, trial.id, ref, start, inputs, case)
            self.weights.setdefault(req.dir, {})[trial.id] = trial.weights
            out.inputs[trial.id] = str(folder / f"{req.shape}_in_{trial.id}.pt")
            out.dists[trial.id] = dist
            self.shipment.write(inputs, out.inputs[trial.id], req.dir)
        return out

    def _signed(self, ref: Any, case: ShapeCase, initial: dict[str, Any], seed: int,
                eval_too: bool = False) -> dict[str, Any]:
        """Perturbed weights, positive entries signed where the reference stays finite and stable (draws.py),
        in eval mode too where a trial runs there (a negative running variance is harmless to training-mode
        batch norm and NaN in eval mode)."""
        prob = self._problem()

        def accepts(moved: dict[str, Any]) -> bool:
            try:
                inputs = build_case(case.module, prob.spec, case.variant, seed=seed, device=self.tdev, dtype=prob.dtype,
                                    dist="signed", int_highs=case.int_highs).inputs
                for training in (True, False) if eval_too else (True,):
                    set_training(ref, training)
                    want = self._reference(ref, moved, inputs, case)
                    if not (finite(want) and self._stable(ref, want, moved, inputs, prob)):
                        return False
                return True
            except Exception:
                return False
            finally:
                set_training(ref, True)

        return signed_state(initial, seed, {k for k, _ in ref.named_parameters()}, accepts)

    def _pruned(self, ref: Any, case: ShapeCase, moved: dict[str, Any], seed: int) -> dict[str, Any]:
        """The perturbed weights with exact zeros (weights.pruned), where the reference stays finite and stable
        on signed inputs at them; else the perturbed ones."""
        prob = self._problem()
        zeroed = pruned(moved, seed ^ 0x2E205, {k for k, _ in ref.named_parameters()})
        try:
            inputs = build_case(case.module, prob.spec, case.variant, seed=seed, device=self.tdev, dtype=prob.dtype,
                                dist="signed", int_highs=case.int_highs).inputs
            want = self._reference(ref, zeroed, inputs, case)
            if finite(want) and self._stable(ref, want, zeroed, inputs, prob):
                return zeroed
        except Exception:
            pass
        return moved

    def _keep_eager(self, folder: str, key: str, ref: Any, state: dict[str, Any], inputs: list[Any],
                    case: ShapeCase) -> None:
        """In a 16-bit run dtype, also PyTorch's own answer in that dtype on the same values (precision.py)."""
        from xe_forge.verify import precision

        prob = self._problem()
        if not precision.applies(prob.dtype):
            return
        try:
            self.eager.setdefault(folder, {})[key] = self._reference(ref, state, inputs, case, dtype=prob.dtype)
        except BadInput:
            pass  # the fp32 truth alone judges then (today's tolerance)

    def _init_args(self, case: ShapeCase) -> list[Any]:
        prob = self._problem()
        if prob.spec is not None and case.variant is not None:
            return init_args(prob.spec, case.variant)  # not build_case: its inputs (a 0.5 GB host draw) go unused
        return inputs_from_module(case.module, 0)[1]

    def _trial(self, prob: _Problem, case: ShapeCase, ref: Any, state: dict[str, Any], trial: p.TrialPlan):
        """Inputs for one trial and the reference's outputs on them. Signed inputs fall back to the
        problem's own where the reference is not finite; wide ones step their offset down until the fp32
        reference is finite, stable and not saturated to a constant (stability.py), then fall back to
        signed; signed ones at a small or large magnitude (cases.SCALES) step down the same way, to unit
        scale."""
        for attempt, offset, scale, zeros in attempts(trial.dist, trial.scale, trial.seed, trial.zeros):
            try:
                inputs = build_case(case.module, prob.spec, case.variant, seed=trial.seed, device=self.tdev,
                                    dtype=prob.dtype, dist=attempt, offset=offset, int_highs=case.int_highs,
                                    scale=scale, zeros=zeros).inputs
            except Exception as exc:
                raise BadInput(f"cannot build inputs for {case.info.label}: {describe(exc)}") from exc
            # far from unit scale, or exact zeros (a log of the input): the reference must judge them too
            checked = attempt in ("wide", "hard") or scale is not None or zeros > 0
            try:
                want = self._reference(ref, state, inputs, case)
            except BadInput:
                if scale is None:
                    raise
                continue
            if attempt == "problem" and not zeros or finite(want) and (not checked or varies(want)
                                                        and self._stable(ref, want, state, inputs, prob)):
                layout = None
                if trial.layout:
                    inputs, want, layout = self._strided(ref, state, inputs, want, case, trial.layout, prob)
                # how to draw these values again: the float64 truth is computed only where a comparison fails
                self._recipe = (case, ref, state, dict(dist=attempt, offset=offset, scale=scale, zeros=zeros), layout)
                return inputs, want, "wide" if attempt == "hard" else attempt
        raise AssertionError("unreachable")

    def _strided(self, ref: Any, state: dict[str, Any], inputs: list[Any], want: list[Any],
                 case: ShapeCase, layout: str, prob: _Problem) -> tuple[list[Any], list[Any], str | None]:
        """The inputs in non-contiguous storage (saved with their strides; layouts.py), where the reference
        accepts them; else the contiguous ones. "expanded" repeats one row, which can leave a reduction
        over the rows nothing to reduce (a batch variance of 0, where rounding noise is all there is): there
        the reference must stay finite, stable and well conditioned (stability.conditioned), else the
        values are kept and only their storage changes ("step 2")."""
        laid = [lay_out(x, layout) for x in inputs]
        try:
            if layout == "expanded":  # the nearby run first: the last reference run sets the expected state
                nearby = self._reference(ref, state, jittered(laid, len(inputs)), case)
            got = self._reference(ref, state, laid, case)
            if layout != "expanded" or finite(got) and conditioned(got, nearby, prob.rtol, prob.atol) \
                    and self._stable(ref, got, state, laid, prob):
                return laid, got, layout
            laid = [lay_out(x, "step 2") for x in inputs]
            return laid, self._reference(ref, state, laid, case), "step 2"
        except BadInput:
            self._reference(ref, state, inputs, case)  # the expected state after the contiguous call
            return inputs, want, None

    def _stable(self, ref: Any, want: list[Any], state: dict[str, Any], inputs: list[Any], prob: _Problem) -> bool:
        args = [x.to(self.tdev) if hasattr(x, "to") else x for x in inputs]
        return stable(want, self.truth.twin(ref), state, args, prob.rtol, prob.atol)

    def _reference(self, ref: Any, state: dict[str, Any], inputs: list[Any], case: ShapeCase,
                   dtype: str = "float32") -> list[Any]:
        """The reference in fp32 (or `dtype`) on exactly the (possibly rounded) values the candidate gets."""
        import torch

        tdtype = getattr(torch, dtype)
        model = ref
        if dtype != "float32":  # a copy in that dtype, beside the fp32 model (which is never converted)
            key = (id(ref), dtype)
            if key not in self.in_dtype:
                self.in_dtype[key] = copy.deepcopy(ref).to(tdtype)
            model = self.in_dtype[key]
            set_training(model, ref.training)
        model.load_state_dict({k: v.to(tdtype) if v.is_floating_point() else v for k, v in state.items()})
        args = [x.to(self.tdev).to(tdtype) if torch.is_tensor(x) and x.is_floating_point()
                else (x.to(self.tdev) if torch.is_tensor(x) else x) for x in inputs]
        try:
            with torch.no_grad():
                out = model(*args)
        except Exception as exc:
            raise BadInput(f"the reference fails on its own inputs ({case.info.label}): {describe(exc)}") from exc
        if dtype == "float32":  # the state the candidate's must match is the fp32 model's
            self._post = Expected(ref.state_dict(), state, {k for k, _ in ref.named_buffers()}, self._problem().rtol,
                                  self._problem().atol)
        return [o.detach() if torch.is_tensor(o) else o for o in flatten(out)]

    # ---------------------------------------------------------------- comparisons

    def compare(self, req: p.Compare) -> p.Compared:
        import torch

        prob = self._problem()
        tdtype = getattr(torch, prob.dtype)
        expected = self.expected.get(req.dir, {})
        reply = p.Compared()
        for item in req.items:
            want = expected[item.id]
            got = load_outputs(item.output, want, self.tdev)
            key = item.name or item.id
            if isinstance(got, str):
                reply.results[key] = p.ItemResult(findings=[Finding(check="outputs", message=got)])
                continue
            if item.against is not None:
                other = load_outputs(item.against, want, self.tdev)
                reply.ghost_changed[key] = isinstance(other, str) or not same_outputs(got, other, prob.rtol, prob.atol)
                continue
            comps = compare_all(got, want, prob.rtol, prob.atol, tdtype, self.eager.get(req.dir, {}).get(item.id))
            if not isinstance(comps, str) and not all(c.passed for c in comps) and prob.dtype == "float32":
                exact = self.truth.outputs(req.dir, item.id, prob)  # the fp32 contract: the float64 truth
                if exact is not None:
                    comps = compare_all(got, want, prob.rtol, prob.atol, tdtype, None, exact)
            result = (p.ItemResult(findings=[Finding(check="outputs", message=comps)]) if isinstance(comps, str)
                      else p.ItemResult(comparisons=comps, passed=all(c.passed for c in comps)))
            if item.state is not None:
                post = self.post.get(req.dir, {}).get(item.id)
                found, result.notes = sent_state_findings(item.state, item.output, post, key, self._reader)
                if found and post is not None and prob.dtype == "float32":  # the fp32 contract, as for outputs
                    truth = self._exact_state(req.dir, item.id, post)
                    if truth is not None:
                        found, result.notes = sent_state_findings(item.state, item.output, truth, key, self._reader)
                result.findings += found
            result.passed = result.passed and not result.findings
            reply.results[key] = result
        reply.degenerate = self._degenerate(req, expected, prob)
        return reply

    def _reader(self, path: str, want: list[Any]) -> Any:
        return load_outputs(path, want, self.tdev)

    def _exact_state(self, folder: str, key: str, post: Expected) -> Expected | None:
        """The float64 reference's state after the same call, judged as the fp32 reference's would be."""
        after = self.truth.state_after(folder, key, self._problem())
        return None if after is None else Expected(after, post.loaded, post.buffers, post.rtol, post.atol)

    def _degenerate(self, req: p.Compare, expected: dict[str, list[Any]], prob: _Problem) -> list[str]:
        """Flags that hold at every weights tried stand alone; the others say where they hold."""
        weights = self.weights.get(req.dir, {})
        where: dict[str, list[str]] = {}
        for a, b in req.degenerate:
            for flag in degenerate_flags(expected[a], expected[b], prob.rtol, prob.atol):
                where.setdefault(flag, []).append(weights.get(a, "initial"))
        tried = {weights.get(a, "initial") for a, _ in req.degenerate}
        out = [flag if set(at) == tried else f"{flag} at the {' and '.join(at)} weights" for flag, at in where.items()]
        ids = list(dict.fromkeys(i for pair in req.degenerate for i in pair))
        if len(tried) > 1 and len(ids) > 2 and all(same_outputs(expected[ids[0]], expected[i], prob.rtol, prob.atol)
                                                   for i in ids[1:]):
            out.append(CONSTANT_REFERENCE)  # nothing a kernel computes can be told from writing that constant
        return out

    # ---------------------------------------------------------------- timed outputs

    def _seeded(self, folder: str, req: p.CheckTimed, seed: int) -> list[Any]:
        """The reference's outputs on the inputs a timed call drew from `seed`, at the initial weights."""
        key = f"seed:{seed}"
        expected = self.expected.setdefault(folder, {})
        if key not in expected:
            prob = self._problem()
            case = prob.shapes[req.shape]
            inputs = redraw(self._template(folder, req), seed, own_dists(case.module, prob.spec))
            expected[key] = self._reference(self.models[folder][req.shape], self.states[folder][req.shape]["initial"],
                                            inputs, case)
            self._keep_eager(folder, key, self.models[folder][req.shape], self.states[folder][req.shape]["initial"],
                             inputs, case)
        return expected[key]

    def _template(self, folder: str, req: p.CheckTimed) -> list[Any]:
        """The inputs timed calls redraw, built once per evaluation (building is the slow part)."""
        key = (req.shape, req.template_seed)
        cache = self.templates.setdefault(folder, {})
        if key not in cache:
            prob = self._problem()
            case = prob.shapes[req.shape]
            cache[key] = build_case(case.module, prob.spec, case.variant, seed=req.template_seed, device=self.tdev,
                                    dtype=prob.dtype).inputs
        return cache[key]

    def check_timed(self, req: p.CheckTimed) -> p.TimedChecked:
        """Fingerprints against the reference, one reference run per distinct seed; sampled outputs in full."""
        prob = self._problem()
        reply = p.TimedChecked()
        for n, (fp, s) in enumerate(zip(req.fingerprints, req.seeds, strict=True)):
            if not fingerprint_matches(fp, self._seeded(req.dir, req, s), prob.rtol, prob.atol):
                reply.bad_fingerprints.append(n)
            self.expected[req.dir].pop(f"seed:{s}", None)
            self.eager.get(req.dir, {}).pop(f"seed:{s}", None)
        for item in req.samples:
            self._seeded(req.dir, req, int(item.id.split(":", 1)[1]))
        sample = self.compare(p.Compare(dir=req.dir, items=req.samples))
        reply.samples = [sample.results[s.name or s.id] for s in req.samples]
        for s in {*req.seeds, *(int(i.id.split(":", 1)[1]) for i in req.samples)}:
            self.expected[req.dir].pop(f"seed:{s}", None)
        return reply

    def release(self, req: p.Release) -> p.Released:
        for store in (self.expected, self.weights, self.states, self.models, self.templates, self.post, self.eager):
            store.pop(req.dir, None)
        self.truth.release(req.dir)
        self.shipment.release(req.dir)
        self.in_dtype.clear()
        return p.Released()


def _warm_meta() -> None:
    """Run common layers once on the meta device at start-up: their first meta run imports torch's
    decompositions (over a second), which would otherwise land in the first unseen-shape plan."""
    import torch
    import torch.nn as nn

    with torch.device("meta"), torch.no_grad():
        x = nn.Conv2d(3, 4, 3)(torch.empty(2, 3, 8, 8))
        x = nn.functional.max_pool2d(nn.GroupNorm(2, 4)(x), 2)
        z = nn.Linear(8, 4)(torch.empty(2, 8))
        torch.softmax(z, -1), torch.logsumexp(z, -1), nn.functional.layer_norm(z, (4,))


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label)


__all__ = ["Judge", "BadInput"]
