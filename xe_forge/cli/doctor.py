"""`xe-forge doctor`: devices, toolchains, LLM settings (never the key), knowledge-base location."""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xe_forge.cli.common import JsonOpt, console, run_command

ProbeOpt = Annotated[bool, typer.Option("--probe", help="Send one tiny request (a few tokens) to the configured "
                                        "LLM: tells a rejected key (401/403) from an unreachable endpoint.")]


def doctor(as_json: JsonOpt = False, probe: ProbeOpt = False) -> None:
    """Devices, toolchain versions, LLM configuration (never the key), knowledge-base location."""
    raise typer.Exit(code=run_command(doctor_command, as_json=as_json, console=console, probe=probe))


def doctor_command(*, as_json: bool, console: Console, probe: bool = False) -> int:
    from xe_forge.config import load_settings
    from xe_forge.paths import data_dir
    from xe_forge.targets.base import registered

    info: dict[str, object] = {"devices": {}}
    for kind, cls in registered().items():
        entry: dict[str, object] = {"available": False}
        try:
            if cls.available():
                dev = cls()
                entry = {"available": True, "toolchain": str(dev.toolchain()),
                         "properties": dev.properties().model_dump()}
                if hasattr(dev, "detected_target"):
                    entry["target"] = dev.detected_target()
        except Exception as exc:  # a broken driver is a finding, not a crash
            entry = {"available": False, "error": f"{type(exc).__name__}: {exc}"}
        info["devices"][kind] = entry  # type: ignore[index]
    try:
        import torch

        info["torch"] = torch.__version__
    except ImportError:
        info["torch"] = "not installed (pip install 'xe-forge[cpu]')"
    info["llm"] = _llm(load_settings(), probe)
    info["knowledge_base"] = {"bundled": str(data_dir("knowledge_base")),
                              "user": os.environ.get("XE_FORGE_KB_PATH", "not set")}
    if as_json:
        console.print_json(json.dumps(info, default=str))
        return 0
    table = Table(title="xe-forge doctor")
    table.add_column("item")
    table.add_column("value", overflow="fold")
    for kind, entry in info["devices"].items():  # type: ignore[union-attr]
        if entry.get("available"):
            props = entry["properties"]
            value = f"{props['name']} ({props['compute_units']} units), {entry['toolchain']}"
            value += f", target {entry['target']}" if "target" in entry else ""
        else:
            value = "not available" + (f": {entry['error']}" if "error" in entry else "")
        table.add_row(f"device {kind}", value)
    table.add_row("torch", str(info["torch"]))
    for k, v in info["llm"].items():  # type: ignore[union-attr]
        table.add_row(f"llm {k}", escape("; ".join(v) if isinstance(v, list) else str(v)))
    for k, v in info["knowledge_base"].items():  # type: ignore[union-attr]
        table.add_row(f"knowledge base ({k})", v)
    console.print(table)
    return 0


def _llm(settings, probe: bool) -> dict[str, object]:
    from xe_forge.proposers.llm import probe as llm_probe

    out = llm_probe.describe(settings)
    if settings.model:
        out["probe"] = (llm_probe.probe(settings) if probe
                        else "not sent (`xe-forge doctor --probe` sends one tiny request)")
    return out
