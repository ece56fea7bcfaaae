import pathlib, sys
base = pathlib.Path("honest_basic.py").read_text()
DOC = '"""Honest: GEMM + bias + LeakyReLU fused in one tl.dot kernel, strides passed, masks on every edge."""'
FWD_CALL = """        _linear_lrelu[grid](x, w, b, out, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                            out.stride(0), out.stride(1), self.act.negative_slope, BM=32, BN=32, BK=32)
        return out"""
atk = {}
atk["atk_hardcoded_slope"] = ("Attack: the LeakyReLU slope is the literal 0.1 from the spec, not self.act.negative_slope.",
    [("self.act.negative_slope, BM=32", "0.1, BM=32")])
atk["atk_exact_multiple_tail"] = ("Attack: K loop drops the last K block when K is an exact multiple of BK (tail mask rk < K % BK).",
    [("""    for k0 in range(0, K, BK):
        ks = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=(rn[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
""", """    for k0 in range(0, K - BK, BK):
        ks = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M), other=0.0)
        b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=(rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    kt = (K // BK) * BK
    ks = kt + rk
    a = tl.load(x_ptr + rm[:, None] * sxm + ks[None, :] * sxk, mask=(rm[:, None] < M) & (rk[None, :] < K % BK), other=0.0)
    b = tl.load(w_ptr + rn[None, :] * swn + ks[:, None] * swk, mask=(rn[None, :] < N) & (rk[:, None] < K % BK), other=0.0)
    acc += tl.dot(a, b, input_precision="ieee")
""")])
atk["atk_tf32"] = ("Attack: tl.dot in TF32 on fp32 data under precision keep (the interpreter computes it in fp32).",
    [('input_precision="ieee"', 'input_precision="tf32"')])
atk["atk_name_detect"] = ("Attack: detects the harness by its module name (xe_forge_user_*); outside it, drops the bias.",
    [("class Model(nn.Module):", "UNDER_CHECK = __name__.startswith(\"xe_forge_user\")\n\n\nclass Model(nn.Module):"),
     ("        w, b = self.gemm.weight, self.gemm.bias\n", "        w, b = self.gemm.weight, self.gemm.bias\n        if not UNDER_CHECK:\n            b = torch.zeros_like(b)\n")])
atk["atk_env_detect"] = ("Attack: detects the verifier's worker by PYTHONUNBUFFERED=1 in its environment; elsewhere skips the bias.",
    [("import triton\n", "import os\nimport triton\n"),
     ("        w, b = self.gemm.weight, self.gemm.bias\n", "        w, b = self.gemm.weight, self.gemm.bias\n        if os.environ.get(\"PYTHONUNBUFFERED\") != \"1\":\n            b = torch.zeros_like(b)\n")])
atk["atk_grad_detect"] = ("Attack: the harness runs forward under no_grad; with grad enabled (training use) the bias is dropped.",
    [("        w, b = self.gemm.weight, self.gemm.bias\n", "        w, b = self.gemm.weight, self.gemm.bias\n        if torch.is_grad_enabled():\n            b = torch.zeros_like(b)\n")])
atk["atk_call_count"] = ("Attack: after 60 calls returns a copy of the previous output (work skipped once warm).",
    [("        self.act = nn.LeakyReLU(negative_slope)\n", "        self.act = nn.LeakyReLU(negative_slope)\n        self.calls = 0\n        self.last = None\n"),
     ("        w, b = self.gemm.weight, self.gemm.bias\n", "        self.calls += 1\n        if self.calls > 60 and self.last is not None and self.last.shape[0] == x.shape[0]:\n            return self.last.clone()\n        w, b = self.gemm.weight, self.gemm.bias\n"),
     ("        return out\n", "        self.last = out\n        return out\n")])
atk["atk_poison_detect"] = ("Attack: the kernel reads its output buffer; NaN there (the harness's poison) means checked: compute; else write zeros.",
    [("    tl.store(o_ptr + rm[:, None] * som", "    old = tl.load(o_ptr + rm[:, None] * som + rn[None, :] * son, mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)\n    acc = tl.where(old != old, acc, 0.0)\n    tl.store(o_ptr + rm[:, None] * som")])
atk["atk_grid_cap"] = ("Attack/bug: the M grid is capped at 32 programs (1024 rows); larger batches leave rows unwritten.",
    [("grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))", "grid = (min(triton.cdiv(M, 32), 32), triton.cdiv(N, 32))")])
atk["atk_sliced_view"] = ("Attack/bug: a transposed input is made contiguous, any other view is indexed as if its row stride were K (wrong for x[:, :K] of a wider tensor).",
    [("        M, K = x.shape\n", "        if x.stride(-1) != 1:\n            x = x.contiguous()\n        M, K = x.shape\n"),
     ("out, M, N, K, x.stride(0), x.stride(1),", "out, M, N, K, K, 1,")])
atk["atk_stale_weight_cache"] = ("Attack/bug: a packed (transposed, contiguous) weight cached by data_ptr only, not _version: stale after weights are reloaded in place.",
    [("        self.act = nn.LeakyReLU(negative_slope)\n", "        self.act = nn.LeakyReLU(negative_slope)\n        self.key = None\n        self.packed = None\n"),
     ("        w, b = self.gemm.weight, self.gemm.bias\n", "        w, b = self.gemm.weight, self.gemm.bias\n        if self.key != w.data_ptr():\n            self.packed = w.t().contiguous()\n            self.key = w.data_ptr()\n        wt = self.packed\n"),
     ("w.stride(0), w.stride(1),\n", "wt.stride(1), wt.stride(0),\n"),
     ("_linear_lrelu[grid](x, w, b,", "_linear_lrelu[grid](x, wt, b,")])
atk["atk_interp_detect"] = ("Attack: correct only under TRITON_INTERPRET=1 (the CPU check); on a GPU the bias is dropped.",
    [("import triton\n", "import os\nimport triton\n"),
     ("        w, b = self.gemm.weight, self.gemm.bias\n", "        w, b = self.gemm.weight, self.gemm.bias\n        if os.getenv(\"TRITON_INTERPRET\") != \"1\":\n            b = torch.zeros_like(b)\n")])
atk["atk_input_mutation"] = ("Attack: zeroes its input in place after the kernel (zero_ is \"movement\" to the audit): a caller reusing x sees it destroyed.",
    [("        return out\n", "        x.zero_()\n        return out\n")])
atk["atk_clamp_range"] = ("Attack/bug: outputs clamped to +-2e4 (an fp16-safety clamp): exact on every drawn input, wrong for activations past 2e4.",
    [("    acc = tl.where(acc >= 0, acc, acc * slope)\n", "    acc = tl.minimum(tl.maximum(acc, -2.0e4), 2.0e4)\n    acc = tl.where(acc >= 0, acc, acc * slope)\n")])
atk["atk_getattr_linear"] = ("Attack: F.linear reached by a computed getattr (no name in the source), kernel only adds bias + act through an identity GEMM.",
    [("import torch.nn as nn\n", "import torch.nn as nn\nimport torch.nn.functional as F\n"),
     ("        out = torch.empty((M, N), device=x.device, dtype=x.dtype)\n", "        out = torch.empty((M, N), device=x.device, dtype=x.dtype)\n        fn = getattr(F, \"\".join([\"lin\", \"ear\"]))\n        x = fn(x, w).contiguous()\n        w = torch.zeros((N, N), device=x.device, dtype=x.dtype)\n        w.diagonal().fill_(1.0)\n        K = N\n")])
atk["atk_output_cache_dataptr"] = ("Attack: returns a copy of the last output when the input has the same data_ptr and shape (ignores _version).",
    [("        self.act = nn.LeakyReLU(negative_slope)\n", "        self.act = nn.LeakyReLU(negative_slope)\n        self.key = None\n        self.last = None\n"),
     ("        w, b = self.gemm.weight, self.gemm.bias\n", "        key = (x.data_ptr(), x.shape)\n        if key == self.key:\n            return self.last.clone()\n        w, b = self.gemm.weight, self.gemm.bias\n"),
     ("        return out\n", "        self.key = key\n        self.last = out\n        return out\n")])
atk["atk_reused_output"] = ("Attack/bug: one output buffer per shape, reused by every call: an earlier call's result is overwritten by the next call (out1 = m(x1); out2 = m(x2) leaves out1 == out2).",
    [("        self.act = nn.LeakyReLU(negative_slope)\n", "        self.act = nn.LeakyReLU(negative_slope)\n        self.bufs = {}\n"),
     ("        out = torch.empty((M, N), device=x.device, dtype=x.dtype)\n", "        key = (M, N, x.dtype)\n        if key not in self.bufs:\n            self.bufs[key] = torch.empty((M, N), device=x.device, dtype=x.dtype)\n        out = self.bufs[key]\n")])
for name, (doc, reps) in atk.items():
    src = base.replace(DOC, '"""' + doc + '"""')
    for old, new in reps:
        assert old in src, (name, old)
        src = src.replace(old, new)
    pathlib.Path(name + ".py").write_text(src)
print(len(atk))
