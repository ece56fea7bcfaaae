"""`xe-forge llm serve`: the bundled small model on 127.0.0.1, for trying the LLM path without a key."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from xe_forge.cli.common import console, run_command
from xe_forge.proposers.local_server import start_server

llm_app = typer.Typer(no_args_is_help=True, help="A local model for the LLM path (no API key needed).")


@llm_app.command()
def serve(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free port).")] = 0,
    threads: Annotated[int | None, typer.Option("--threads", help="CPU threads (default: half the cores, up to 8).")] = None,
    ctx: Annotated[int, typer.Option("--ctx", help="Context window in tokens.")] = 8192,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Longest answer in tokens.")] = 1024,
) -> None:
    """Serve SmolLM2-135M-Instruct on 127.0.0.1 with an OpenAI-compatible /v1/chat/completions until Ctrl-C."""
    def go() -> int:
        server = start_server(port=port, threads=threads, ctx=ctx, max_tokens=max_tokens)
        try:  # from here on Ctrl-C stops the server, whenever it comes
            console.print(f"serving {server.gguf.name} at {server.api_base} (Ctrl-C stops it). A 135M model "
                          "writes poor kernels: this shows the plumbing, the verifier rejects what it writes. "
                          "In another shell (any KERNEL will do):", highlight=False, soft_wrap=True)
            for name, value in server.settings_env().items():
                console.print(f"export {name}={value}", highlight=False, soft_wrap=True)
            console.print(server.try_command(), highlight=False, soft_wrap=True)
            console.file.flush()  # the lines are needed now, also when stdout is a file or a pipe
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:  # the way to stop a server: not an error
            console.print("stopped")
            return 0
        finally:
            server.stop()

    raise typer.Exit(code=run_command(go))
