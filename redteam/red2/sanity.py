"""Shows an attack is wrong: runs KERNEL and REF at given init/input shapes, prints max |err|.
usage: TRITON_INTERPRET=1 python red2/sanity.py KERNEL REF 'init_args' 'input_expr'  (python literals/expr with torch)"""
import importlib.util
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


kern, ref = load(sys.argv[1], "kern_mod"), load(sys.argv[2], "ref_mod")
init = eval(sys.argv[3])
torch.manual_seed(0)
m_ref = ref.Model(*init)
m_k = kern.Model(*init)
m_k.load_state_dict(m_ref.state_dict())
x = eval(sys.argv[4])
xs = x if isinstance(x, (list, tuple)) else [x]
grad = len(sys.argv) > 5 and sys.argv[5] == "grad"
with torch.set_grad_enabled(grad):
    want = m_ref(*[t.clone() for t in xs])
    got = m_k(*xs)
print("max |err|", (want - got).abs().max().item(), "max |ref|", want.abs().max().item())
