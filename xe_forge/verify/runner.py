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

from xe_forge.problem.cases import import_from_path, model_class
from xe_forge.verify import protocol as p
from xe_forge.verify.audit import audit_call, foreign_kernels, kernel_profile
from xe_forge.verify.compare import flatten
from xe_forge.verify.hooks import PatchGuard, count_launches, poisoned_allocations
from xe_forge.verify.weights import load_into, pair_tensors


def describe(exc: BaseException, limit: int = 600) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[:limit] + " ..."


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
        handlers = {"import": self.import_, "run": self.run, "time": self.time, "spin": self.spin}
        return handlers[req.op](req)

    def import_(self, req: p.Import) -> p.Imported:
        try:
            self.modules[req.role] = import_from_path(req.path, req.role)
        except Exception as exc:
            self.modules.pop(req.role, None)
            return p.Imported(failure=describe(exc), line=error_line(exc, req.path))
        except SystemExit as exc:  # not an Exception, but a candidate's to answer for
            return p.Imported(failure=f"the candidate exited at import ({exc.code})")
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
            model = model_class(module)(*init)
        except Exception as exc:
            return None, [], f"building the model with {init} raised {describe(exc)}", error_line(exc, self.paths[role])
        floating = next((v.dtype for v in state.values() if torch.is_tensor(v) and v.is_floating_point()), None)
        model.to(device=self.tdev, dtype=floating) if floating is not None else model.to(self.tdev)
        return model, pair_tensors(state, model.state_dict()), None, None

    def run(self, req: p.Run) -> p.Ran:
        import torch

        states: dict[str, dict[str, Any]] = {}

        def state(path: str) -> dict[str, Any]:
            if path not in states:
                states[path] = {k: v.to(self.tdev) for k, v in torch.load(path, map_location="cpu",
                                                                           weights_only=True).items()}
            return states[path]

        model, pairs, failure, line = self.build(req.role, req.init, req.seed, state(req.calls[0].state))
        if model is None:
            return p.Ran(build_failure=failure, build_line=line)
        self.model, self.kept = model, {}
        reply = p.Ran()
        for call in req.calls:
            load_into(model, state(call.state), pairs)
            inputs = [x.to(self.tdev) if torch.is_tensor(x) else x
                      for x in torch.load(call.inputs, map_location="cpu", weights_only=True)]
            if call.reuse is not None:
                for x, y in zip(self.kept[call.reuse], inputs, strict=False):
                    if torch.is_tensor(x):
                        x.copy_(y)
                inputs = self.kept[call.reuse]
            self.kept[call.id] = inputs
            profile = req.kernel_list and call is req.calls[0] and self.on_gpu
            result, out = self.invoke(model, inputs, call.id, ghost=call.ghost, allowed=req.allowed, profile=profile,
                                      path=self.paths.get(req.role))
            if out is not None:
                torch.save([o.detach().cpu() if torch.is_tensor(o) else o for o in out], call.output)
            if call.after is not None:
                torch.save([x.detach().cpu() if torch.is_tensor(x) else x for x in inputs], call.after)
            reply.calls.append(result)
        return reply

    def invoke(self, model: Any, inputs: list[Any], call_id: str, *, ghost: bool = False, allowed: list[str] = (),
               profile: bool = False, path: str | None = None) -> tuple[p.CallResult, list[Any] | None]:
        """One forward under the harness: poisoned allocations, launch count, torch audit, kernel list."""
        import torch

        result = p.CallResult(id=call_id)
        out = None
        try:
            with torch.no_grad(), poisoned_allocations(), count_launches(ghost=ghost, label=profile) as counter, \
                    kernel_profile(profile) as prof, \
                    audit_call(model, list(allowed), on_gpu=self.on_gpu, launches=counter) as audit:
                out = flatten(model(*inputs))
                self.device.synchronize()
        except Exception as exc:
            result.failure, result.line = f"forward raised {describe(exc)}", error_line(exc, path)
            return result, None
        result.launches, result.triton_kernels = counter.count, sorted(counter.names)
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
        return result, out

    # ---------------------------------------------------------------- timed calls

    def time(self, req: p.TimePlan) -> p.Timed:
        from xe_forge.verify.timing import TimingSession

        self.timing = TimingSession(self, req)
        return self.timing.run()

    def spin(self, req: p.Spin) -> p.Spun:
        if self.timing is None:
            return p.Spun(error="spin before time")
        return self.timing.spin(req)
