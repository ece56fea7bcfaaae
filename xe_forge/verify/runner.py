"""The candidate's process: import the candidate, build it, load the weights it is sent, run forward.

It only ever sees constructor args, state dicts and inputs (files from the reference process) and
writes outputs back; it never holds a reference output, a tolerance or a verdict. Around each call
the harness poisons fresh allocations, counts Triton launches (or makes them no-ops for ghost
replay) and audits torch's work; those figures go back as evidence that can only condemn.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from xe_forge.problem.cases import import_from_path, model_class, module_name
from xe_forge.verify import guarded
from xe_forge.verify import protocol as p
from xe_forge.verify.audit import audit_call
from xe_forge.verify.compare import flatten
from xe_forge.verify.held import HeldOutputs
from xe_forge.verify.hooks import PatchGuard, count_launches, poisoned_allocations
from xe_forge.verify.kernel_list import foreign_kernels, kernel_profile
from xe_forge.verify.model_walk import (
    entry_refusal,
    freeze,
    load_state,
    named_state,
    parameters,
    refusal,
    set_training,
)
from xe_forge.verify.state_check import write_state
from xe_forge.verify.subset_rules import mark_user_module
from xe_forge.verify.transport import load_shipped, write_outputs
from xe_forge.verify.weights import interface_change, pair_tensors


def describe(exc: BaseException, limit: int = 600) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + " ..."


def _refused(text: str) -> str:
    return text if "SubsetRefusal" not in text else text.replace("SubsetRefusal: ", "outside the host subset: ")


def error_line(exc: BaseException, path: str | Path | None) -> int | None:
    """The line of the candidate file where an exception surfaced, for feedback."""
    if path is None:
        return None
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == str(path):
            return frame.lineno
    return None


def warm_up(device: Any) -> None:
    """Run every harness path once before any candidate is imported: lazy imports (dynamo, behind the
    dispatch mode) and pickling caches change torch's namespaces, which the patch guard would report."""
    import io

    import torch

    model = torch.nn.Linear(2, 2)
    with torch.no_grad(), poisoned_allocations(), count_launches(), audit_call(model, ["self.x"], on_gpu=False):
        model(torch.zeros(1, 2)).sum()
    buffer = io.BytesIO()
    torch.save([torch.zeros(1)], buffer)
    buffer.seek(0)
    torch.load(buffer, weights_only=True)
    device.synchronize()
    on_gpu = not device.torch_device().startswith("cpu")
    with kernel_profile(on_gpu) as prof:  # the profiler imports lazily too
        (torch.ones(4, device=device.torch_device()) * 2).sum()
        device.synchronize()
    if on_gpu and not isinstance(prof, str):
        with audit_call(model, [], on_gpu=True) as audit:
            pass
        foreign_kernels(prof, audit, set())


def grad_mode(mode: str) -> Any:
    """The grad mode a call runs in (drawn per call, CallPlan.grad): production has all three."""
    import torch

    return {"on": torch.enable_grad, "inference": torch.inference_mode}.get(mode, torch.no_grad)()


def tracked(inputs: list[Any], call: p.CallPlan) -> list[Any]:
    """The inputs as forward gets them: with `input_grad`, floating ones require grad (the same storage)."""
    import torch

    if not (call.input_grad and call.grad == "on"):
        return inputs
    return [x.detach().requires_grad_() if torch.is_tensor(x) and x.is_floating_point() else x for x in inputs]


def mutated(before: list[Any], after: list[Any]) -> list[int]:
    """Positions of inputs forward changed in place (the harness kept a copy; a finding that condemns)."""
    import torch

    return [i for i, (b, a) in enumerate(zip(before, after, strict=True))
            if torch.is_tensor(b) and (not torch.is_tensor(a) or a.shape != b.shape or a.dtype != b.dtype
                                       or not torch.equal(a, b))]


class Runner:
    """Serves the parent's requests in the candidate's process."""

    def __init__(self, device: Any) -> None:
        import torch

        # torch ops a port keeps (`self.conv`) compute as the reference does: IEEE fp32, not cuDNN's default
        # TF32 (seen on an H200: a kept fp32 conv then misses rtol 1e-4 by 5x); the candidate's own
        # kernels choose their precision in tl.dot, which the precision contract judges
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.device = device
        self.tdev = device.torch_device()
        self.on_gpu = not self.tdev.startswith("cpu")
        self.modules: dict[str, ModuleType] = {}
        self.paths: dict[str, str] = {}
        self.model: Any = None  # the last model built, with its weights loaded (timing reuses it)
        self.kept: dict[str, list[Any]] = {}
        self.timing: Any = None
        self.current_guard: PatchGuard | None = None  # the request's guard (the harness may patch under it)
        warm_up(device)

    def guard(self) -> PatchGuard:
        guard = PatchGuard()
        for module in self.modules.values():
            guard.watch_module(module)
        self.current_guard = guard
        return guard

    def handle(self, req: Any) -> p.Reply:
        handlers = {"import": self.import_, "run": self.run, "time_prepare": self.time_prepare,
                    "time_chunk": self.time_chunk, "spin": self.spin}
        return handlers[req.op](req)

    def import_(self, req: p.Import) -> p.Imported:
        # kernel files run in the host subset
        table = None if req.role == "reference" or not req.subset else guarded.builtins_table()
        guarded.refusals()
        name = None
        if table is not None:  # under its own stem, as production imports it; its objects are the file's own
            name = module_name(req.path, req.role)
            mark_user_module(name)
        try:
            self.modules[req.role] = import_from_path(req.path, req.role, builtins=table, name=name)
        except Exception as exc:
            self.modules.pop(req.role, None)
            return p.Imported(failure=_refused(describe(exc)), line=error_line(exc, req.path))
        except SystemExit as exc:  # not an Exception, but a candidate's to answer for
            return p.Imported(failure=f"the candidate exited at import ({exc.code})")
        refused = guarded.refusals()
        if refused:
            self.modules.pop(req.role, None)
            return p.Imported(failure=_refused(f"outside the host subset: {'; '.join(refused)}"))
        self.paths[req.role] = req.path
        return p.Imported()

    # ---------------------------------------------------------------- checked calls

    def build(self, role: str, init_file: str, seed: int, state: dict[str, Any]) -> tuple[Any, list, str | None, int | None]:
        import torch

        module = self.modules.get(role)
        if module is None:
            return None, [], f"no {role} module is loaded", None
        init = torch.load(init_file, map_location="cpu", weights_only=True)
        torch.manual_seed(seed)
        try:
            entry = model_class(module)
        except Exception as exc:
            return None, [], describe(exc), None
        why = entry_refusal(entry, module)
        if why is not None:
            return None, [], why, None
        guarded.refusals()
        try:
            with torch.device(self.tdev):  # initialised on the device: the state dict replaces it anyway
                model = entry(*init)
        except Exception as exc:
            return None, [], f"building the model with {init} raised {describe(exc)}", error_line(exc, self.paths[role])
        refused = guarded.refusals()
        if refused:
            return None, [], f"building the model went outside the host subset: {'; '.join(refused)}", None
        why = refusal(model, entry)  # before the harness calls anything on it (.to, loading, fingerprints)
        if why is not None:
            return None, [], why, None
        floating = next((v.dtype for v in state.values() if torch.is_tensor(v) and v.is_floating_point()), None)
        model.to(device=self.tdev, dtype=floating) if floating is not None else model.to(self.tdev)
        return model, pair_tensors(state, named_state(model)), None, None

    def run(self, req: p.Run) -> p.Ran:
        import torch

        states: dict[str, dict[str, Any]] = {}

        def state(path: str) -> dict[str, Any]:
            if path not in states:
                states[path] = {k: v.to(self.tdev) for k, v in load_shipped(path, self.tdev).items()}
            return states[path]

        model, pairs, failure, line = self.build(req.role, req.init, req.seed, state(req.calls[0].state))
        if model is None:
            return p.Ran(build_failure=failure, build_line=line)
        why = interface_change(state(req.calls[0].state), named_state(model)) if req.role == "candidate" else None
        if why is not None:
            return p.Ran(build_failure=why, build_check="state-dict")
        self.model, self.kept = model, {}
        built = {id(t): t.requires_grad for t in parameters(model)}  # as the file made them
        self.called: dict[str, list[Any]] = {}  # call id -> the objects its forward got (a grad-tracked view too)
        reply = p.Ran()
        held = HeldOutputs()  # every checked call's outputs, held as a caller holds them (held.py)
        for call in req.calls:
            if call.reload or not call.again:
                load_state(model, state(call.state), pairs)
            inputs = [x.to(self.tdev) if torch.is_tensor(x) else x
                      for x in load_shipped(call.inputs, self.tdev)]
            if call.reuse is not None and call.again:  # the very objects that call's forward got, untouched
                inputs = self.called[call.reuse]
            elif call.reuse is not None:
                with torch.no_grad():
                    for x, y in zip(self.kept[call.reuse], inputs, strict=False):
                        if torch.is_tensor(x):
                            x.copy_(y)
                inputs = self.kept[call.reuse]
            self.kept[call.id] = inputs
            freeze(model, call.frozen, built)
            set_training(model, not call.eval)
            profile = req.kernel_list and call is req.calls[0] and self.on_gpu
            if call.warm:
                warm_failure = self.warm(model, inputs, call, self.paths.get(req.role))
                if warm_failure is not None:
                    reply.calls.append(warm_failure)
                    continue
                load_state(model, state(call.state), pairs)  # the compared call starts from the sent weights
            before = [x.clone() if torch.is_tensor(x) else x for x in inputs] if call.check_inputs else None
            args = inputs if call.again else tracked(inputs, call)
            self.called[call.id] = args
            result, out = self.invoke(model, args, call.id, ghost=call.ghost, allowed=req.allowed, profile=profile,
                                      path=self.paths.get(req.role), grad=call.grad, poison=call.poison)
            if out is not None and not call.ghost:
                result.state = write_state(model, pairs, call.output, ipc=self.tdev.startswith("cuda"))
                result.reused = held.check(call.id, out)
            if out is not None:
                write_outputs(out, call.output, ipc=self.tdev.startswith("cuda"))
            if before is not None:
                result.mutated = mutated(before, inputs)
            reply.calls.append(result)
        set_training(model, True)  # timed calls, as the model was built
        return reply

    def warm(self, model: Any, inputs: list[Any], call: p.CallPlan, path: str | None) -> p.CallResult | None:
        """`call.warm` calls of the long-lived model before the compared one, so the compared call sits at a
        secret index past any call count a `check` could be told from production by (red team 2, root
        cause 1). Cheap: every launch is a no-op and the inputs are fresh copies (no output to find by
        their identity); the outputs are dropped. A failure here is the compared call's."""
        import torch

        copies = tracked([x.clone() if torch.is_tensor(x) else x for x in inputs], call)
        guarded.refusals()
        try:
            with grad_mode(call.grad), poisoned_allocations(call.poison), count_launches(ghost=True):
                for _ in range(call.warm):
                    model(*copies)
        except Exception as exc:
            return p.CallResult(id=call.id, failure=_refused(f"forward raised {describe(exc)} in a call of a "
                                                             "long-lived model"),
                                line=error_line(exc, path), refused=guarded.refusals())
        refused = guarded.refusals()
        return p.CallResult(id=call.id, failure="outside the host subset", refused=refused) if refused else None

    def invoke(self, model: Any, inputs: list[Any], call_id: str, *, ghost: bool = False, allowed: list[str] = (),
               profile: bool = False, path: str | None = None, grad: str = "off",
               poison: bool = True) -> tuple[p.CallResult, list[Any] | None]:
        """One forward under the harness: poisoned allocations, launch count, torch audit, kernel list.
        `grad` and `poison` are drawn per call by the parent (CallPlan): production runs with grad on
        and unpoisoned memory, so checked calls run both ways."""
        import torch

        result = p.CallResult(id=call_id)
        out = None
        guarded.refusals()
        try:
            with grad_mode(grad), poisoned_allocations(poison), count_launches(ghost=ghost, label=profile) as counter, \
                    kernel_profile(profile) as prof, \
                    audit_call(model, list(allowed), on_gpu=self.on_gpu, launches=counter,
                               inputs=inputs) as audit:
                out = flatten(model(*inputs))
                self.device.synchronize()
        except Exception as exc:
            result.failure, result.line = _refused(f"forward raised {describe(exc)}"), error_line(exc, path)
            result.refused = guarded.refusals()
            return result, None
        result.refused = guarded.refusals()
        result.launches, result.triton_kernels = counter.count, sorted(counter.names)
        result.tiles, result.grids = sorted(counter.log.tiles), [list(g) for g in counter.log.grids[:64]]
        result.flags = sorted(counter.log.flags)
        result.audit = audit.summary_
        if profile:
            if isinstance(prof, str):
                result.audit.kernel_list = prof
            else:
                result.audit.foreign_kernels = foreign_kernels(prof, audit, counter.names)
                result.audit.kernel_list = "checked"
        subclass = next((type(o).__name__ for o in out if torch.is_tensor(o) and type(o) is not torch.Tensor), None)
        if subclass:
            result.failure = f"returns a {subclass}, a torch.Tensor subclass: outputs must be plain tensors"
            return result, None
        return result, [o.detach() if torch.is_tensor(o) else o for o in out]  # a call with grad on may track

    # ---------------------------------------------------------------- timed calls

    def time_prepare(self, req: p.TimePrepare) -> p.TimeReady:
        from xe_forge.verify.timing import TimingSession

        self.timing = TimingSession(self, req)
        return self.timing.ready()

    def time_chunk(self, req: p.TimeChunk) -> p.Chunk:
        if self.timing is None:
            return p.Chunk(error="time_chunk before time_prepare")
        return self.timing.chunk(req)

    def spin(self, req: p.Spin) -> p.Spun:
        if self.timing is None:
            return p.Spun(error="spin before time_prepare")
        return self.timing.spin(req)
