"""Builds the tables of RESULTS.md from results.txt (FILE|EXIT|message lines, from run_all.sh) and the class
of each attack below; the hole analysis in RESULTS.md is written by hand."""
import ast
import pathlib
import sys

CLASSES = {
    "atk_hardcoded_slope": "scalar ctor args", "atk_exact_multiple_tail": "unseen-shape planning",
    "atk_tf32": "precision (CPU blind)", "atk_name_detect": "harness detection", "atk_env_detect": "harness detection",
    "atk_grad_detect": "harness detection", "atk_interp_detect": "harness detection (CPU vs GPU)",
    "atk_poison_detect": "checking/timing distinguishability", "atk_call_count": "stateful / skip work",
    "atk_output_cache_dataptr": "stateful / caching", "atk_stale_weight_cache": "stateful / caching",
    "atk_grid_cap": "unseen-shape planning (size bound)", "atk_width_cap": "unseen-shape planning (size bound)",
    "atk_suppress_exit": "exceptions + size bound", "atk_hardcoded_width": "shape specialisation",
    "atk_sliced_view": "strided views", "atk_torch_linear": "torch does the work",
    "atk_grid_lambda": "torch does the work (grid callable)", "atk_getattr_linear": "torch does the work (computed getattr)",
    "atk_cast_trunc": "torch does the work (movement allowlist)", "atk_input_mutation": "input mutation",
    "atk_clamp_range": "input distribution (magnitude)", "atk_int16_range": "input distribution (magnitude)",
    "atk_eps_hardcoded": "input distribution (scale) / tolerance", "atk_flush_tiny": "tolerance (absolute atol)",
    "atk_abs_gamma": "weight distribution (sign)", "atk_one_pass_var": "numerics (cancellation)",
    "atk_no_eps": "numerics (padding row)", "atk_no_max": "numerics (overflow)", "atk_bf16_partials": "precision",
    "atk_no_running_stats": "state", "atk_even_k_branch": "unseen-shape planning (aligned sizes)",
    "atk_racy_accumulate": "CPU interpreter (concurrency)", "atk_last_program_finishes": "CPU interpreter (program order)",
    "atk_empty_as_zeros": "uninitialised memory",
    "atk_reused_output": "output aliasing across calls", "atk_wrong_output_shape": "output shape", "atk_unmasked_store": "out-of-bounds store", "atk_autotune_bad_config": "autotune (unchecked configs)", "atk_pre_run_hook": "torch does the work (Triton pre-run hook)", "atk_pre_run_hook_all": "torch does the work (Triton pre-run hook)", "atk_pre_run_hook_pyfn": "torch does the work (hook, control)",
    "atk_one_pass_batch_var": "input distribution (hard rows on the last dim only)", "atk_fingerprint_period_swap": "state check (fingerprint)", "atk_biased_running_var": "state", "atk_no_batch_count": "state",
}


def doc(path: str) -> str:
    try:
        return (ast.get_docstring(ast.parse(pathlib.Path(path).read_text())) or "").replace("\n", " ")
    except SyntaxError:
        return "?"


def main(results: str) -> None:
    rows = [line.split("|", 2) for line in pathlib.Path(results).read_text().splitlines() if line.count("|") >= 2]
    rows = [r for r in rows if "ref_pytorch" not in r[0]]
    atk = [r for r in rows if pathlib.Path(r[0]).name.startswith("atk_")]
    hon = [r for r in rows if pathlib.Path(r[0]).name.startswith("honest_")]
    holes = [r for r in atk if r[1] == "0"]
    wrong = [r for r in hon if r[1] != "0"]
    print(f"**Attacks: {len(atk)}, holes (accepted): {len(holes)}, caught: {len(atk) - len(holes)}; "
          f"honest: {len(hon)}, wrongly rejected: {len(wrong)}.**\n")
    print("## Attacks\n\n| file | class | what it does | exit | verifier's first line | verdict |\n|---|---|---|---|---|---|")
    for f, rc, msg in atk:
        name = pathlib.Path(f).stem
        what = doc(f).replace("|", "/")
        print(f"| {f} | {CLASSES.get(name, '?')} | {what} | {rc} | {msg.replace('|', '/')[:200]} | "
              f"{'**HOLE**' if rc == '0' else 'CAUGHT'} |")
    print("\n## Honest kernels\n\n| file | style | exit | verifier's first line | verdict |\n|---|---|---|---|---|")
    for f, rc, msg in hon:
        print(f"| {f} | {doc(f).replace('|', '/')} | {rc} | {msg.replace('|', '/')[:120]} | "
              f"{'accepted' if rc == '0' else '**WRONGLY REJECTED**'} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "red2/results.txt")
