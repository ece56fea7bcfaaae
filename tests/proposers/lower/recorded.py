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
