"""Problem context for proposers: shapes, dtype, FLOPs, bytes, arithmetic intensity, roofline floor.

Peak figures are leads from datasheets and this project's own measurements (H200: measured, see
benchmarks/RESULTS.md); the floor is max(FLOPs / peak, bytes / bandwidth).
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from xe_forge.problem.kernel import Problem
from xe_forge.problem.spec import input_shapes

# (dense 16-bit matrix TFLOP/s, fp32 TFLOP/s, memory GB/s)
PEAKS: dict[str, tuple[float, float, float]] = {
    "intel-xe2": (183.0, 23.0, 608.0),       # Arc Pro B70: 32 Xe2-cores x 2048 x 2.8 GHz; 608 GB/s
    "intel-xe-hpc": (419.0, 52.0, 1640.0),    # Max 1550, one stack (KB xe-hpc-pvc-roofline: 3.28 TB/s is two)
    "intel-xe-hpg": (138.0, 17.0, 560.0),     # Arc A770-class (low confidence)
    "nvidia-sm90": (790.0, 67.0, 4300.0),     # H200 measured: bf16 GEMM 790 TFLOP/s, copy 4.3 TB/s
    "nvidia-any": (300.0, 30.0, 2000.0),
    "any": (100.0, 20.0, 1000.0),
}
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4, "int8": 1, "bool": 1}


class ProblemFacts(BaseModel):
    variant: str | None
    shapes: dict[str, list[int]]
    dtype: str
    flops: float | None
    bytes_min: float | None
    intensity: float | None
    floor_ms: float | None
    target: str

    def render(self) -> str:
        lines = [f"target: {self.target}", f"dtype: {self.dtype}"]
        lines += [f"input {k}: {v}" for k, v in self.shapes.items()]
        if self.flops:
            lines.append(f"FLOPs (main op): {self.flops:.3g}")
        if self.bytes_min:
            lines.append(f"bytes moved at least (inputs once): {self.bytes_min:.3g}")
        if self.intensity:
            lines.append(f"arithmetic intensity: {self.intensity:.1f} FLOP/byte")
        if self.floor_ms:
            lines.append(f"roofline floor on {self.target}: {self.floor_ms:.4f} ms")
        return "\n".join(lines)


def problem_facts(problem: Problem, target: str) -> ProblemFacts:
    variant = problem.variant_entry()
    spec = problem.spec
    if spec is None or variant is None:
        return ProblemFacts(variant=None, shapes={}, dtype="float32", flops=None, bytes_min=None,
                              intensity=None, floor_ms=None, target=target)
    dtype = variant.dtype or "float32"
    shapes = {k: list(v) for k, v in input_shapes(spec, variant).items()}
    size = DTYPE_BYTES.get(dtype, 4)
    nbytes = float(sum(math.prod(s) for s in shapes.values()) * size)
    flops = variant.flops()
    peak16, peak32, bw = PEAKS.get(target, PEAKS["any"])
    peak = peak16 if size == 2 else peak32
    floor = None
    if flops or nbytes:
        floor = max((flops or 0) / (peak * 1e12), nbytes / (bw * 1e9)) * 1e3
    return ProblemFacts(variant=problem.variant, shapes=shapes, dtype=dtype, flops=flops, bytes_min=nbytes,
                          intensity=(flops / nbytes) if flops and nbytes else None, floor_ms=floor, target=target)
