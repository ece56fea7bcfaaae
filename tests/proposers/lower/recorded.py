"""Recorded GPU lowerings (fixtures/, see make_fixtures.py) and the problems they came from.

Each fixture is a `Lowering` TorchInductor produced on an H200 (torch 2.11, triton 3.6) for one
KernelBench level-2 problem, with a small-shape spec beside it so the interpreter can check it.
"""

from __future__ import annotations

from pathlib import Path

from xe_forge.proposers.lower.models import Lowering

FIXTURES = Path(__file__).parent / "fixtures"
# name -> dtype of its recorded lowering
RECORDED = {
    "12_Gemm_Multiply_LeakyReLU": "float32",  # GEMM + epilogue, Python scalars as kernel arguments
    "18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp": "float32",  # GEMM + row reductions
    "33_Gemm_Scale_BatchNorm": "float32",  # GEMM + training-mode BatchNorm (buffers written in place)
    "21_Conv2d_Add_Scale_Sigmoid_GroupNorm": "float32",  # Conv2d template + GroupNorm (Welford)
    "6_Conv3d_Softmax_MaxPool_MaxPool": "float32",  # Conv3d template + online softmax + max pooling
    "65_Conv2d_AvgPool_Sigmoid_Sum": "bfloat16",  # bf16 Conv2d + average pooling + split reduction
    "17_Conv2d_InstanceNorm_Divide": "float32",  # every size pinned by Inductor (duck-sized lowering)
    "66_Matmul_Dropout_Softmax": "bfloat16",  # keeps a library call (aten.randint for the dropout seed)
}


def lowering(name: str) -> Lowering:
    return Lowering.model_validate_json((FIXTURES / f"{name}.{RECORDED[name]}.json").read_text())


def reference(name: str) -> Path:
    return FIXTURES / f"{name}.py"


def spec(name: str) -> Path:
    return FIXTURES / f"{name}.yaml"


def at_spec_shapes(name: str, variant: str | None = None, spec_path: Path | None = None) -> Lowering:
    """The recorded lowering as if it had been lowered at the fixture spec's shapes (default: its ci variant).

    Its kernels are dynamic in every size the spec varies (the fixture specs keep the pinned ones), so
    they are valid there; only the signature the fast path serves (the wrapper's get_args()) changes.
    This is how the CPU exercises a fast path at interpreter-sized shapes.
    """
    import ast
    import re

    import torch

    from xe_forge.problem.cases import build_case, import_from_path, model_class
    from xe_forge.problem.spec import load_spec
    from xe_forge.proposers.lower.sources import source_expr

    record = lowering(name)
    problem_spec = load_spec(spec_path or spec(name))
    module = import_from_path(reference(name), "reference")
    case = build_case(module, problem_spec, problem_spec.variant(variant), seed=0, device="cpu", dtype=record.dtype)
    model = model_class(module)(*case.init_args).to(getattr(torch, record.dtype))
    forward = next(n for n in ast.walk(ast.parse(reference(name).read_text()))
                   if isinstance(n, ast.FunctionDef) and n.name == "forward")
    scope = {"self": model, **dict(zip([a.arg for a in forward.args.args[1:]], case.inputs, strict=True))}
    lines = ["def get_args():", "    from torch._dynamo.testing import rand_strided"]
    for i, ph in enumerate(record.placeholders):
        value = eval(source_expr(ph.source), {}, scope)  # noqa: S307 - a source expression over the test's model
        if ph.kind == "symint":
            lines.append(f"    arg{i}_1 = {int(value)}")
        elif ph.kind == "scalar":
            lines.append(f"    arg{i}_1 = rand_strided((), (), device='cpu', dtype=torch.float64)")
        else:
            lines.append(f"    arg{i}_1 = rand_strided({tuple(value.shape)!r}, {tuple(value.stride())!r}, "
                         f"device='cuda:0', dtype={value.dtype})")
    lines.append(f"    return [{', '.join(f'arg{i}_1' for i in range(len(record.placeholders)))}]")
    code = re.sub(r"def get_args\(\):.*?(?=\n\n\ndef )", "\n".join(lines), record.codes[0], count=1, flags=re.S)
    assert code != record.codes[0]
    return record.model_copy(update={"codes": [code]})
