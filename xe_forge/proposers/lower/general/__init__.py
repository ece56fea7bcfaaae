"""The general path of a port: the reference's forward as Triton kernels that hold at every shape.

A port (xe_forge/proposers/lower/port.py) is a fast path plus this general path. The fast path is
TorchInductor's lowering, served where the call's signature is the one it was lowered and autotuned
for; the general path serves every other call. It is built from the reference itself: tracer.py
traces forward with torch.fx (in a child process, probe.py) into steps (models.py), emit.py writes
them as a forward that calls the launchers of runtime/ (implicit-GEMM convolutions, transposed ones
included, batched GEMM, reductions, norms, pools) and fused pointwise kernels (pointwise.py). Every
size, channel count, kernel size, stride, padding, dilation and group count is read at run time
from the live model and its inputs.
"""
