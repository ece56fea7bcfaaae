"""Lowerings cached on disk, by what decides them: the reference, the shape signature, dtype, toolchain.

The key is the reference source's hash, the signature the lowering is made for (the spec variant's
input shapes and constructor arguments, else the module constants the reference's own inputs come
from, which its source hash covers), the run dtype and precision policy, and the toolchain (torch,
triton, the device's name). A spec edit elsewhere (an unseen shape, a tolerance) keeps the cache.
A lowering that ran out of its autotuning budget is used only by a request with no larger budget.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from xe_forge.proposers.lower.models import Lowering

LOWER_VERSION = "2"  # bump when the lowering settings or the record's meaning change


def cache_dir() -> Path:
    root = os.environ.get("XE_FORGE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xe-forge")
    return Path(root) / "lowerings"


def shape_signature(spec: Any, variant_name: str | None) -> dict[str, Any]:
    """What fixes the shapes of a lowering: a spec variant's input shapes and constructor args, or 'module'."""
    if spec is None:
        return {"shapes": "module constants"}
    from xe_forge.problem.spec import init_args, input_shapes

    variant = spec.variant(variant_name)
    return {"inputs": {k: list(v) for k, v in input_shapes(spec, variant).items()},
            "input_dtypes": {k: v.dtype for k, v in spec.inputs.items()},
            "inits": [repr(a) for a in init_args(spec, variant)]}


def cache_key(reference_source: str, signature: dict[str, Any], dtype: str, precision: str,
              toolchain: dict[str, str]) -> str:
    parts = [LOWER_VERSION, hashlib.sha256(reference_source.encode()).hexdigest(), signature, dtype, precision,
             dict(sorted(toolchain.items()))]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def load(key: str, budget_s: float) -> Lowering | None:
    """The cached lowering, unless it was cut short by a smaller budget than this request's."""
    path = cache_dir() / f"{key}.json"
    if not path.is_file():
        return None
    try:
        lowering = Lowering.model_validate_json(path.read_text())
    except ValueError:
        return None
    if lowering.budget_spent and (lowering.budget_s or 0.0) < budget_s:
        return None
    return lowering


def store(key: str, lowering: Lowering) -> None:
    if not lowering.ok:
        return
    path = cache_dir() / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(lowering.model_dump_json())
    tmp.replace(path)
