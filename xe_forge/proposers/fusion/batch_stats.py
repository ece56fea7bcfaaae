"""BatchNorm's batch statistics in training mode: per-tile partials, one combine launch, the running update.

The launch that computes the normalised value's input stores, for each row tile and column, the
tile's sum and centred sum of squares, and the tile's row count: one row of partials per BLOCK_M
rows, the buffer sized for the smallest row tile the autotuner may pick (rows it leaves unused keep
a zero count, and the autotuner zeroes the counts between its trials). A small launch then combines
the rows with Chan's formula, so a column whose mean is large against its spread keeps its variance
(E[x^2] - E[x]^2 in fp32 does not: it cancels to noise on inputs verifier v3 draws), writes each
column's mean and biased variance for the consuming launch, and updates running_mean, running_var
and num_batches_tracked exactly as nn.BatchNorm1d does in training mode.
"""

from __future__ import annotations

from xe_forge.proposers.fusion.ir import Node
from xe_forge.proposers.fusion.naming import HostNames
from xe_forge.proposers.fusion.plan import Plan, Stat

PARTIALS = ["sum", "m2", "count"]
"""Per row tile, written by the producing launch ('count' is per tile, the others per tile and column)."""
RESULTS = ["mean", "var"]
"""Per column, written by the combine launch and read by the consumer."""
BLOCK_C = 128
BLOCK_R = 32

KERNEL = '''@triton.jit
def _batch_moments_kernel(sum_ptr, m2_ptr, count_ptr, mean_ptr, var_ptr, rmean_ptr, rvar_ptr, tracked_ptr,
                          R, C, momentum, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, UPDATE: tl.constexpr):
    """Chan's combine of per-tile column moments into the batch mean and biased variance; with
    UPDATE, BatchNorm's running statistics (unbiased variance) and its batch counter as well."""
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < C
    total = tl.zeros([BLOCK_C], dtype=tl.float32)
    rows = tl.zeros([BLOCK_R], dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        n = tl.load(count_ptr + r, mask=r < R, other=0.0)
        live = (n > 0)[:, None] & cmask[None, :]
        total += tl.sum(tl.load(sum_ptr + r[:, None] * C + cols[None, :], mask=live, other=0.0), 0)
        rows += n
    count = tl.sum(rows, 0)
    mean = total / count
    m2 = tl.zeros([BLOCK_C], dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        n = tl.load(count_ptr + r, mask=r < R, other=0.0)
        live = (n > 0)[:, None] & cmask[None, :]
        at = r[:, None] * C + cols[None, :]
        d = tl.load(sum_ptr + at, mask=live, other=0.0) / tl.maximum(n, 1.0)[:, None] - mean[None, :]
        q = tl.load(m2_ptr + at, mask=live, other=0.0) + n[:, None] * d * d
        m2 += tl.sum(tl.where(live, q, 0.0), 0)
    tl.store(mean_ptr + cols, mean, mask=cmask)
    tl.store(var_ptr + cols, m2 / count, mask=cmask)
    if UPDATE:
        rm = tl.load(rmean_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
        rv = tl.load(rvar_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
        tl.store(rmean_ptr + cols, (1 - momentum) * rm + momentum * mean, mask=cmask)
        tl.store(rvar_ptr + cols, (1 - momentum) * rv + momentum * (m2 / (count - 1)), mask=cmask)
        if tl.program_id(0) == 0:
            tl.store(tracked_ptr, tl.load(tracked_ptr) + 1)
'''


def min_rows_tile(plan: Plan, stat: Stat, gemm_configs: list[dict], tile_m: int) -> int:
    """The smallest BLOCK_M the producing launch may run with (sizes the partial rows)."""
    phase = plan.phases[stat.phase]
    if phase.kind == "gemm" and gemm_configs:
        return min(int(c["BLOCK_M"]) for c in gemm_configs)
    return tile_m


def allocations(stat: Stat, host: HostNames, columns: str, rows_tile: int) -> list[str]:
    rows = host.slots(stat.node)
    lines = [f"{rows} = triton.cdiv(M, {rows_tile})  # a row of partials per row tile of the producing launch"]
    lines += [f"{host.stat(stat.node, p)} = torch.empty(({rows}, {columns}), device=dev, dtype=torch.float32)"
              for p in ("sum", "m2")]
    lines.append(f"{host.stat(stat.node, 'count')} = torch.zeros(({rows},), device=dev, dtype=torch.float32)")
    lines += [f"{host.stat(stat.node, p)} = torch.empty(({columns},), device=dev, dtype=torch.float32)" for p in RESULTS]
    return lines


def combine_launch(stat: Stat, node: Node, host: HostNames, columns: str) -> list[str]:
    """The combine launch, after the producing one; it updates the running statistics where the module tracks them."""
    part = {p: host.stat(stat.node, p) for p in PARTIALS + RESULTS}
    owner = node.attrs.get("running")
    if owner:
        running = f"{owner}.running_mean, {owner}.running_var, {owner}.num_batches_tracked"
        momentum, update = f"{owner}.momentum", "True"
    else:
        running = f"{part['mean']}, {part['var']}, {part['count']}"
        momentum, update = "0.0", "False"
    return [
        f"_batch_moments_kernel[(triton.cdiv({columns}, {BLOCK_C}),)](",
        f"    {part['sum']}, {part['m2']}, {part['count']}, {part['mean']}, {part['var']}, {running},",
        f"    {host.slots(stat.node)}, {columns}, {momentum}, BLOCK_R={BLOCK_R}, BLOCK_C={BLOCK_C}, UPDATE={update},",
        ")",
    ]
