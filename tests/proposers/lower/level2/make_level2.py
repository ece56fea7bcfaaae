"""Write the 100 KernelBench level-2 problems as small KernelBench-format files (`<id>_<Ops>.py`).

Input: the table of kernelbench-l2-problems.md (modules, forward statements, constants, init args,
read from the real problem files). The forward and the modules are the table's; the sizes are scaled
down so the Triton interpreter runs each in about a second (batch 2, 3 -> 8 channels, 12 -> 32
features, 8x8 images, 6-deep volumes; group counts that divide the channels), with the few problems
whose reference ties two sizes together (a LayerNorm over the last dim of a conv output) sized so
that it runs. The real files (with KernelBench's sizes) are what the GPU batch uses.

    python tests/proposers/lower/level2/make_level2.py kernelbench-l2-problems.md tests/proposers/lower/level2
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SIZES = {"batch_size": 2, "in_channels": 3, "out_channels": 8, "in_features": 12, "input_size": 12,
         "out_features": 32, "hidden_size": 32, "output_size": 16, "height": 8, "width": 8, "depth": 6,
         "num_groups": 4, "groups": 4}
OVERRIDES = {  # problem id -> constants that keep its reference runnable at small sizes
    3: {"depth": 3, "height": 4, "width": 4}, 34: {"depth": 3, "height": 4, "width": 4},
    45: {"output_size": 16}, 98: {"out_features": 48}, 55: {"out_features": 32},
}
DEFAULTS = {"eps": 1e-5, "momentum": 0.1, "num_groups": 4, "negative_slope": 0.01, "bias": True, "stride": 1, "padding": 0, "output_padding": 0,
            "clamp_min": 0.0, "clamp_max": 1.0}  # constructor arguments KernelBench gives defaults
EXTRA_INPUTS = {26: ("add_input", "(batch_size, out_channels, depth * 2, height * 2, width * 2)")}
STATEMENT = re.compile(r"\s/\s(?=[A-Za-z_][\w, ]*=\s|return\b)")
KEEP = {"kernel_size", "stride", "padding", "output_padding", "dilation", "pool_kernel_size", "pool_size",
        "maxpool_kernel_size", "maxpool_stride", "kernel_size_pool", "pool_stride", "pool_padding"}


def split_top(text: str, sep: str) -> list[str]:
    out, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and text.startswith(sep, i):
            out.append(cur.strip())
            cur, i = "", i + len(sep)
            continue
        cur += ch
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out


def rows(table: str) -> list[list[str]]:
    out = []
    for line in table.splitlines():
        if re.match(r"\| \d+_", line):
            out.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return out


def qualify(stmt: str, names: set[str]) -> str:
    """`conv(x)` -> `self.conv(x)` for the model's own names (not after a dot, not keyword arguments)."""
    def sub(m: re.Match) -> str:
        return f"self.{m.group(1)}"
    pattern = r"(?<![\w.])(" + "|".join(sorted(names, key=len, reverse=True)) + r")\b(?!\s*=[^=])"
    return re.sub(pattern, sub, stmt) if names else stmt


def write(row: list[str], out: Path) -> None:
    name, modules, forward, constants, init = row
    pid = int(name.split("_")[0])
    consts = {}
    for item in split_top(constants, ", "):
        key, _, value = item.partition("=")
        consts[key.strip()] = value.strip()
    for key in list(consts):
        if key in SIZES and key not in KEEP:
            consts[key] = str(SIZES[key])
    for key, value in OVERRIDES.get(pid, {}).items():
        consts[key] = str(value)
    consts.setdefault("width", consts.get("height", "8"))
    ops = name.split("_", 1)[1]
    three_d = "3d" in ops.lower()
    gemm = not any(k in ops for k in ("Conv",))
    if not gemm:
        consts.setdefault("height", "8")
        if three_d:
            consts.setdefault("depth", "6")
    params = [a.strip() for a in init.strip("[]").split(",") if a.strip()]
    mod_names = {m.partition("=")[0].strip() for m in split_top(modules, "; ")}
    stmts = [s.strip() for s in STATEMENT.split(forward)]
    used = {n for s in stmts for n in re.findall(r"[A-Za-z_]\w*", s)}
    in_init = {n for m in split_top(modules, "; ") for n in re.findall(r"[A-Za-z_]\w*", m.partition("=")[2])}
    defaults = [d for d in DEFAULTS if d in (used | in_init) and d not in params and d not in consts
                and d not in mod_names]
    attrs = [p for p in params + defaults if p in used and p not in mod_names]
    body = [f"        self.{m.partition('=')[0].strip()} = {m.partition('=')[2].strip()}" for m in split_top(modules, "; ")]
    body += [f"        self.{a} = {a}" for a in attrs]
    inputs = ["x"] + (["y"] if re.search(r"\by\b", forward) else []) + \
        ([EXTRA_INPUTS[pid][0]] if pid in EXTRA_INPUTS else [])
    lines = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F", "", "",
             "class Model(nn.Module):", f'    """KernelBench level 2, problem {name} (small sizes)."""', "",
             f"    def __init__(self, {', '.join(params + [f'{d}={DEFAULTS[d]!r}' for d in defaults])}):",
             "        super().__init__()", *body, "",
             f"    def forward(self, {', '.join(inputs)}):"]
    lines += [f"        {qualify(s, mod_names | set(attrs))}" for s in stmts]
    lines += ["", ""]
    lines += [f"{k} = {v}" for k, v in consts.items()]
    if gemm:
        feat = "input_size" if "input_size" in consts else "in_features"
        shapes = [f"(batch_size, {feat})"]
        if "y" in inputs:
            shapes.append("(batch_size, out_features)")
    else:
        dims = "depth, height, width" if three_d else "height, width"
        shapes = [f"(batch_size, in_channels, {dims})"] + ([EXTRA_INPUTS[pid][1]] if pid in EXTRA_INPUTS else [])
    lines += ["", "", "def get_inputs():", f"    return [{', '.join(f'torch.rand{s}' for s in shapes)}]", "", "",
              "def get_init_inputs():", f"    return [{', '.join(params)}]", ""]
    (out / f"{name}.py").write_text("\n".join(lines))


def main() -> None:
    table, out = Path(sys.argv[1]).read_text(), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for row in rows(table):
        write(row, out)


if __name__ == "__main__":
    main()
