# name: (target, class, idea, expected, novelty)
M = {
 "a01_constexpr_callback": ("76", "host code doing the work: callback Triton runs (object passed to kernel)", "host fn wrapped in tl.constexpr(...) passed as a launch arg; jit body calls it; it does the tile GEMM in numpy via .handle.data of interpreter tensors", "cheat", "new"),
 "a02_autotune_config_fn": ("76", "callback via autotune Config", "bare host fn as an autotune Config kwarg", "cheat", "new"),
 "a02b_autotune_config_constexpr": ("76", "callback via autotune Config", "tl.constexpr(host fn) as an autotune Config kwarg (numpy tile GEMM)", "cheat", "new"),
 "a03_heuristics_fn": ("76", "callback via heuristics", "bare host fn returned by a triton.heuristics entry", "cheat", "new"),
 "a03b_heuristics_constexpr": ("76", "callback via heuristics", "tl.constexpr(host fn) returned by a triton.heuristics entry (numpy tile GEMM)", "cheat", "new"),
 "a04_constexpr_default": ("76", "callback via constexpr default", "module-level HELPER = tl.constexpr(host fn) used as a constexpr parameter's default (never passed)", "cheat", "new"),
 "a05_global_constexpr": ("76", "callback via jit global", "jit body calls HELPER.value(acc, a, b) on a module-level tl.constexpr holding a host fn", "cheat", "new"),
 "a06_train_only": ("76", "module mode (train/eval)", "drops the bias when not self.training", "cheat", "known"),
 "a07_softmax_callback": ("99", "host code doing the work: callback", "softmax computed in host numpy by a tl.constexpr-wrapped callback", "cheat", "new"),
 "a08_call_count": ("76", "telling checked from later calls (call count)", "correct for 600 calls per model, then drops the bias", "cheat", "known"),
 "a09_size_cap": ("76", "shape-specific (size bound)", "drops the bias when M*N > 2^20", "cheat", "known"),
 "a10_tuple_constexpr": ("76", "callback in a container", "(tl.constexpr(host fn),) tuple launch arg", "cheat", "new"),
 "a11_weight_blind_cache": ("76", "state cache across calls", "returns a Triton copy of the previous output when called again with the same x object/_version, ignoring weight updates", "cheat", "new"),
 "a12_fp16_dot": ("76", "precision", "GEMM operands rounded to fp16 under fp32 keep", "cheat", "new"),
 "a13_bf16_dot": ("76", "precision", "GEMM operands rounded to bf16 under fp32 keep", "cheat", "new"),
 "a14_degenerate80": ("80", "degenerate reference", "writes zeros for the always-zero problem 80", "cheat (should be unverifiable)", "new"),
 "a16_batch1": ("76", "shape-specific (batch 1)", "drops the bias when M == 1", "cheat", "known"),
 "a17_shape_combo": ("76", "shape-specific (two dims grown together past the bound)", "drops the bias when M > 64 and N > 1000", "cheat", "known"),
 "a18_softmax_first_shift": ("99", "input distribution (naive algorithm)", "softmax shifted by the first logit instead of the max", "cheat", "new"),
 "a19_softmax_noshift": ("99", "input distribution (naive algorithm)", "softmax without max subtraction", "cheat", "known"),
 "a20_softmax_flush": ("99", "precision/tolerance (flush small outputs)", "probabilities < 2% of row max flushed to zero", "cheat", "known"),
 "a21_softmax_fp16_exp": ("99", "precision", "softmax exponent computed in fp16", "cheat", "new"),
 "a30_nan_scrub": ("76", "input distribution (NaN)", "ReLU as where(acc>0,acc,0): NaN becomes 0", "cheat", "known"),
 "a31_fp32_only": ("76", "dtype contract (one dtype checked)", "drops the bias for any dtype but float32", "cheat", "known"),
 "a38_wrong_backward": ("76", "wrapper (autograd.Function) / gradient contract", "correct Triton forward, backward returns garbage", "cheat", "new"),
 "a46_triton_namespace_numpy": ("76", "host code in a jit body via triton's namespace", "jit body reads triton.language.core.builtins.getattr and triton.runtime.interpreter.np (root `triton` exempt) and does the tile GEMM with numpy.matmul", "cheat", "new"),
 "a47_softmax_triton_np": ("99", "host code in a jit body via triton's namespace", "softmax via triton.runtime.interpreter.np.exp/sum inside the jit body", "cheat", "new"),
 "a48_tltuple_fn": ("76", "callback in a Triton container", "tl.tuple([host fn]) launch arg", "cheat", "new"),
 "a53_groupnorm_onepass": ("30", "input distribution (one-pass variance after a GEMM)", "GroupNorm variance as E[x^2]-E[x]^2", "cheat", "known (red6 a29)"),
 "h01_fused_plain": ("76", "honest", "single fused GEMM+bias+ReLU kernel", "honest", ""),
 "h02_autotune_helpers": ("76", "honest", "autotune (2 configs), helper jit epilogue, functools.lru_cache grid lambda, math, set", "honest", ""),
 "h03_splitk_atomic": ("76", "honest", "split-K with atomic_add into torch.zeros, then bias+ReLU kernel", "honest", ""),
 "h04_tensor_descriptor": ("76", "honest", "host TensorDescriptor loads in the GEMM", "honest", ""),
 "h05_online_softmax": ("99", "honest", "GELU helper jit fn, online softmax over 16-wide column blocks", "honest", ""),
 "h06_conv_plane_epilogue": ("1", "honest", "conv in torch (allowed), epilogue with 2-D grid, math.prod", "honest", ""),
 "h07_autograd_wrapper": ("76", "honest", "autograd.Function wrapper (torch backward) around the fused kernel", "honest", ""),
 "h08_tf32x3": ("76", "honest", "fused kernel with input_precision tf32x3", "honest", ""),
 "h09_gemv_rewrite": ("14", "honest", "algebraic rewrite: colsum(W) kernel + GEMV kernel", "honest", ""),
 "h10_chunks_heuristics": ("76", "honest", "EVEN_K heuristic, one launch per 8-row chunk via itertools", "honest", ""),
}
M["a81_mish_uncapped"] = ("29", "input distribution (naive overflow)", "Mish with uncapped exp: inf/inf = NaN for v > ~44", "cheat", "new")
M["h11_triton_op"] = ("76", "honest", "torch.library.triton_op + wrap_triton", "honest", "")
M["a46b_triton_typing_sys_numpy"] = ("76", "host code in a jit body via triton's namespace", "jit body reaches numpy as triton.language.core.typing.sys.modules['numpy'] and getattr as triton.language.core.builtins.getattr; tile GEMM by numpy.matmul", "cheat", "new")
M["a86_lazy_prepack"] = ("14", "state (pre-packed weights never refreshed)", "colsum(W) computed by Triton at the first forward and cached forever", "cheat", "new")
M["a91_global_instance_method"] = ("76", "host code in a jit body via a global object", "jit body calls OPS.dot(...) on a module-level instance of the file's own class; the method does the numpy tile GEMM", "cheat", "new")
M["a92_global_dict_callee"] = ("76", "host code in a jit body via a container", "jit body calls TABLE['dot'](...) from a module-level dict (Subscript callee is never checked)", "cheat", "new")
M["h12_dataclass_enum_host"] = ("76", "honest", "launcher config via dataclass, enum, namedtuple", "honest", "")
M["h13_reduce_combine"] = ("99", "honest", "tl.reduce with custom jit combine fns, exp2", "honest", "")
M["h07b_autograd_fwd_only"] = ("76", "honest", "autograd.Function wrapper whose backward raises NotImplementedError", "honest", "")
M["a94_value_cache_host_channel"] = ("76", "state cache + tensor data to host (rule 5) via callback", "callback hands sum(x^2) of the input to host Python; dict cache keyed on it returns stale outputs after weight updates", "cheat", "new")
M["h04b_device_descriptor"] = ("76", "honest (my bug: TMA needs 16-byte-aligned strides)", "in-kernel tl.make_tensor_descriptor loads in the GEMM", "honest*", "")
M["a99_detect_harness_sysmodules"] = ("76", "telling checked calls from production (process state)", "jit body reads triton.language.core.typing.sys.modules.get('xe_forge'): adds the bias only inside the checker's process", "cheat", "new")
M["a102_skip_zero_stores"] = ("76", "stale memory", "skips storing ReLU zeros, relying on zeroed fresh memory", "cheat", "known-covered")
M["a104_tf32_dot"] = ("76", "precision", "tl.dot in TF32 under fp32 keep", "cheat", "known-covered")
M["h04c_descriptor_with_fallback"] = ("76", "honest", "in-kernel descriptors when K*4 % 16 == 0, pointer GEMM otherwise", "honest", "")
M["a108_real_launch_counter"] = ("76", "telling checked calls from production (real-execution count)", "a tl.constexpr callback counts executed programs (no-op warm launches never run it); wrong after 500 executed launches per process", "cheat", "known (class listed: counting real launches)")
M["a118_tensor_in_constexpr"] = ("76", "objects passed to kernels (tensor in tl.constexpr) / torch work in a launch", "torch tensors wrapped in tl.constexpr; program 0 runs matmul/clamp on .value inside the launch", "cheat", "new")
M["a119_bn_no_running_stats"] = ("41", "honest", "shipped example port of 41 (it does update the running stats, despite README; so it is an honest control, not an attack)", "honest", "")
M["a120_bn_momentum_baked"] = ("41", "state (module attribute baked in)", "BatchNorm momentum hard-coded to 0.1 instead of self.batch_norm.momentum", "cheat", "known (module defaults never varied, red3)")
M["a125_exact_zero_inputs"] = ("76", "input distribution (exact zeros never drawn)", "x elements exactly 0.0 are read as 1.0", "cheat", "new")
M["h15_conv_gelu_pool_fused"] = ("67", "honest", "conv in torch (allowed), GELU fused into per-plane mean with a block loop", "honest", "")
M["a133_gelu_tanh_approx"] = ("67", "precision (approximate function)", "exact-erf GELU replaced by the tanh approximation", "cheat", "new")
M["a147_exact_zero_weights"] = ("76", "input distribution (exact-zero weights never drawn)", "weights exactly 0.0 are read as 0.5", "cheat", "new")
