"""What packaging a port needs to know from the reference itself, learned in a child process.

The parent never imports user code. `python -m xe_forge.proposers.lower.general.probe JOB.json`
imports the reference, builds its model on the meta device at the problem's constructor arguments
(the spec variant's, else get_init_inputs()), traces forward into general-path steps (tracer.py)
and lists the model's literal configuration (every module attribute a lowering may have specialized
on: strides, paddings, group counts, eps, training flags) as expression -> repr. The answer is one
JSON `ProbeResult` written beside the job.
"""

from __future__ import annotations

import math
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from xe_forge.proposers.lower.general.models import GeneralGraph

PROBE_TIMEOUT = 300.0


class ProbeJob(BaseModel):
    reference_path: str
    spec: dict[str, Any] | None = None
    variant: str | None = None
    out_path: str = ""


class ProbeResult(BaseModel):
    graph: GeneralGraph = Field(default_factory=GeneralGraph)
    config: dict[str, str] = Field(default_factory=dict)
    error: str = ""


# shape restatements a lowering's signature already pins: not part of the model's configuration
SHAPE_ATTRIBUTES = {"in_channels", "out_channels", "in_features", "out_features", "num_features", "num_channels"}


def literal(value: Any) -> bool:
    if isinstance(value, bool | int | str) or value is None:
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, tuple | list) and all(literal(v) for v in value)


def model_config(model: Any) -> dict[str, str]:
    """Every literal attribute of every module, by the expression that reads it (shape restatements left out)."""
    from xe_forge.proposers.lower.general.convert import module_expr

    out: dict[str, str] = {}
    for name, module in model.named_modules():
        prefix = module_expr(name) if name else "self"
        for attr, value in vars(module).items():
            if attr.startswith("_") or attr in SHAPE_ATTRIBUTES or not literal(value):
                continue
            out[f"{prefix}.{attr}"] = repr(tuple(value) if isinstance(value, list) else value)
    return out


def meta_case(module: Any, spec: Any, variant: Any) -> tuple[list[Any], list[Any]]:
    """Constructor args and meta-device inputs of the problem's shapes (nothing allocated)."""
    import torch

    from xe_forge.problem.cases import torch_dtype
    from xe_forge.problem.spec import init_args, input_shapes

    if spec is not None and variant is not None:
        inputs = []
        for name, shape in input_shapes(spec, variant).items():
            dtype = torch_dtype(spec.inputs[name].dtype) or torch.float32
            inputs.append(torch.empty(shape, dtype=dtype, device="meta"))
        return list(init_args(spec, variant)), inputs
    with torch.device("meta"):
        return list(module.get_init_inputs()), list(module.get_inputs())


def probe(job: ProbeJob) -> ProbeResult:
    import torch

    from xe_forge.problem.cases import import_from_path, model_class
    from xe_forge.problem.spec import Spec
    from xe_forge.proposers.lower.general.tracer import trace_model

    module = import_from_path(job.reference_path, "reference")
    spec = Spec(**job.spec) if job.spec else None
    variant = spec.variant(job.variant) if spec else None
    init, inputs = meta_case(module, spec, variant)
    with torch.device("meta"):
        model = model_class(module)(*init)
    config = model_config(model)
    return ProbeResult(graph=trace_model(model, inputs), config=config)


def run_probe(reference: Path, spec: dict[str, Any] | None, variant: str | None,
              timeout: float = PROBE_TIMEOUT) -> ProbeResult:
    """The probe in its own process (the reference's code runs there, never here)."""
    from xe_forge.verify.sandbox import scrubbed_environ

    env = scrubbed_environ()
    root = str(Path(__file__).resolve().parents[4])
    env["PYTHONPATH"] = ":".join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env.pop("TRITON_INTERPRET", None)
    with tempfile.TemporaryDirectory(prefix="xe-forge-probe-") as tmp:
        job = ProbeJob(reference_path=str(Path(reference).resolve()), spec=spec, variant=variant,
                       out_path=str(Path(tmp) / "probe.json"))
        (Path(tmp) / "job.json").write_text(job.model_dump_json())
        try:
            proc = subprocess.run([sys.executable, "-m", "xe_forge.proposers.lower.general.probe",
                                   str(Path(tmp) / "job.json")], cwd=tmp, env=env, capture_output=True, text=True,
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return ProbeResult(error=f"probing the reference took longer than {timeout:.0f} s")
        out = Path(job.out_path)
        if not out.is_file():
            tail = " | ".join((proc.stderr or proc.stdout or "no output").strip().splitlines()[-3:])
            return ProbeResult(error=f"the probe process exited with {proc.returncode}: {tail[:400]}")
        return ProbeResult.model_validate_json(out.read_text())


def main(path: str) -> int:
    job = ProbeJob.model_validate_json(Path(path).read_text())
    try:
        result = probe(job)
    except BaseException as exc:  # the reason is the answer
        result = ProbeResult(error=f"{type(exc).__name__}: {str(exc).strip()[:800]}")
    Path(job.out_path).write_text(result.model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
