"""Trace the PyTorch reference with torch.fx, in a subprocess, into the fusion graph (ir.Graph).

The parent never imports user code, so `trace_reference` writes the reference to a temporary file
and runs `python -m xe_forge.proposers.fusion.trace FILE` with a scrubbed environment and a timeout.
The child builds the Model on the meta device (no weights are allocated, whatever the sizes),
traces forward symbolically, propagates meta shapes from `get_inputs()`, and prints one JSON
TraceResult. Results are cached per reference source for the life of the process.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from xe_forge.proposers.fusion.ir import TraceResult

TRACE_TIMEOUT = 240.0
_CACHE: dict[str, TraceResult] = {}


def trace_reference(source: str, *, timeout: float = TRACE_TIMEOUT) -> TraceResult:
    """The fusion graph of a reference file's source, or a TraceResult whose reason says why not."""
    key = hashlib.sha256(source.encode()).hexdigest()
    if key not in _CACHE:
        _CACHE[key] = _trace_in_subprocess(source, timeout)
    return _CACHE[key]


def _trace_in_subprocess(source: str, timeout: float) -> TraceResult:
    from xe_forge.verify.sandbox import scrubbed_environ

    package_root = str(Path(__file__).resolve().parents[3])
    env = scrubbed_environ()
    env["PYTHONPATH"] = os.pathsep.join([package_root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("TRITON_INTERPRET", None)
    with tempfile.TemporaryDirectory(prefix="xe-forge-trace-") as tmp:
        path = Path(tmp) / "reference_traced.py"
        path.write_text(source)
        try:
            proc = subprocess.run([sys.executable, "-m", "xe_forge.proposers.fusion.trace", str(path)], cwd=tmp,
                                  env=env, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return TraceResult(reason=f"tracing the reference took longer than {timeout:.0f} s")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return TraceResult(reason=f"the tracing process failed: {tail[:300]}")
    return TraceResult.model_validate_json(lines[-1])


def trace_in_process(source: str) -> TraceResult:
    """The same trace in this process (for callers that already trust the reference, like tests)."""
    with tempfile.TemporaryDirectory(prefix="xe-forge-trace-") as tmp:
        path = Path(tmp) / "reference_traced.py"
        path.write_text(source)
        return trace_file(path)


def _model_init(cls: type) -> tuple[str, list[str]]:
    """The reference Model's __init__ source (dedented) and the module-level names it reads."""
    try:
        source = textwrap.dedent(inspect.getsource(cls.__init__))
    except (OSError, TypeError):
        return "", []
    return source, []


def trace_file(path: Path) -> TraceResult:
    """Child side: import the reference, trace it, convert it (see convert.py)."""
    import importlib.util

    import torch
    import torch.fx
    from torch.fx.passes.shape_prop import ShapeProp

    from xe_forge.proposers.fusion import functions, modules  # noqa: F401  (register their converters)
    from xe_forge.proposers.fusion.convert import Converter, Unsupported

    spec = importlib.util.spec_from_file_location("xe_forge_traced_reference", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    cls = getattr(module, "ModelNew", None) or getattr(module, "Model", None)
    if cls is None:
        return TraceResult(reason="the reference defines no Model")
    with torch.device("meta"):
        model = cls(*module.get_init_inputs())
    init, helpers = _model_init(cls)
    try:
        gm = torch.fx.symbolic_trace(model)
    except Exception as err:  # fx raises many types for data-dependent control flow
        return TraceResult(reason=f"torch.fx cannot trace the reference's forward: {type(err).__name__}: "
                                  f"{str(err).splitlines()[0][:200]}")
    inputs = [torch.empty_like(x, device="meta") if torch.is_tensor(x) else x for x in module.get_inputs()]
    try:
        ShapeProp(gm).propagate(*inputs)
        graph = Converter(gm, model).run()
    except Unsupported as err:
        return TraceResult(reason=err.reason, model_init=init, helpers=helpers)
    except Exception as err:
        return TraceResult(reason=f"shape propagation of the reference failed: {type(err).__name__}: "
                                  f"{str(err).splitlines()[0][:200]}")
    return TraceResult(graph=graph, model_init=init, helpers=helpers)


def main() -> None:
    result = trace_file(Path(sys.argv[1]))
    print(json.dumps(result.model_dump(mode="json")))


if __name__ == "__main__":
    main()
