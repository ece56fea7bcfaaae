"""Compile jit bodies for an sm90 target without a GPU (frontend + TTIR/TTGIR), to show what a GPU build refuses."""
import sys, importlib.util, traceback
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m

def try_compile(fn, signature, constexprs, label):
    try:
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs)
        triton.compile(src, target=GPUTarget("cuda", 90, 32))
        print(label, "COMPILED (all stages)")
    except Exception as e:
        msg = str(e).strip().splitlines()
        print(label, "->", type(e).__name__, ":", " | ".join(l for l in msg if l.strip())[:400])

a07 = load("/work/red4/ew/a07_break_in_jit.py", "a07")
try_compile(a07._relu_bias_rows, {"x_ptr": "*fp32", "b_ptr": "*fp32", "o_ptr": "*fp32", "M": "i32", "N": "i32", "sxm": "i32", "sxn": "i32", "BLOCK_N": "constexpr"}, {"BLOCK_N": 32}, "a07 break")
a06 = load("/work/red4/dot/a06_dot_tile_8.py", "a06")
sig = {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "o_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32", "sxm": "i32", "sxk": "i32", "swn": "i32", "swk": "i32", "EVEN_K": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"}
try_compile(a06._linear, sig, {"EVEN_K": False, "BLOCK_M": 8, "BLOCK_N": 8, "BLOCK_K": 8}, "a06 dot 8x8x8")
try_compile(a06._linear, sig, {"EVEN_K": False, "BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}, "a06 dot 16x16x16 (control)")
