"""Settings (xe_forge/config.py): flags over XE_FORGE_* variables over .env over defaults, an API key
that never shows up in anything printed, and every run option reaching the run it configures."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from xe_forge.cli.app import app
from xe_forge.config import PROVIDER_KEY_VARS, RunRequest, Settings, load_settings
from xe_forge.errors import InputError

SECRET = "sk-test-SECRET"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No XE_FORGE_* or provider key from the developer's shell, and no .env from the checkout."""
    import os

    for name in list(os.environ):
        if name.startswith("XE_FORGE_") or name in PROVIDER_KEY_VARS:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_defaults_without_environment():
    settings = load_settings()
    assert settings.model is None and not settings.llm_configured()
    assert settings.api_key is None and settings.key_source() is None
    assert settings.device == "auto" and settings.trials == 3


def test_environment_variables_are_read(monkeypatch):
    monkeypatch.setenv("XE_FORGE_MODEL", "openai/gpt-test")
    monkeypatch.setenv("XE_FORGE_API_BASE", "http://localhost:9999/v1")
    monkeypatch.setenv("XE_FORGE_TRIALS", "5")
    monkeypatch.setenv("XE_FORGE_DEVICE", "cpu")
    monkeypatch.setenv("XE_FORGE_LLM_TEMPERATURE", "0.7")
    settings = load_settings()
    assert settings.model == "openai/gpt-test" and settings.llm_configured()
    assert settings.api_base == "http://localhost:9999/v1"
    assert settings.trials == 5 and settings.device == "cpu" and settings.llm_temperature == 0.7


def test_flags_override_the_environment_and_absent_flags_do_not(monkeypatch):
    monkeypatch.setenv("XE_FORGE_MODEL", "from-env")
    monkeypatch.setenv("XE_FORGE_TRIALS", "5")
    settings = load_settings(model="from-flag", trials=None)
    assert settings.model == "from-flag"
    assert settings.trials == 5, "a flag left at None must not erase the environment's value"


def test_dotenv_is_read_below_the_environment(monkeypatch, tmp_path):
    (tmp_path / ".env").write_text("XE_FORGE_MODEL=from-dotenv\nXE_FORGE_MAX_ITERS=9\n")
    monkeypatch.setenv("XE_FORGE_MODEL", "from-env")
    settings = load_settings()
    assert settings.model == "from-env" and settings.max_iters == 9


def test_a_bad_environment_value_is_one_input_error_without_the_value(monkeypatch):
    monkeypatch.setenv("XE_FORGE_TRIALS", "many-SECRETISH")
    with pytest.raises(InputError, match="XE_FORGE_TRIALS") as info:
        load_settings()
    assert info.value.exit_code == 2
    assert "SECRETISH" not in str(info.value)


def test_api_key_is_secret_in_every_printed_form(monkeypatch):
    monkeypatch.setenv("XE_FORGE_API_KEY", SECRET)
    settings = load_settings()
    assert isinstance(settings.api_key, SecretStr)
    assert settings.api_key.get_secret_value() == SECRET
    for text in (str(settings), repr(settings), settings.model_dump_json(), str(settings.model_dump()),
                 f"{settings}", f"{settings.api_key}"):
        assert SECRET not in text


def test_key_source_names_the_variable_never_the_value(monkeypatch):
    monkeypatch.setenv("XE_FORGE_API_KEY", SECRET)
    assert load_settings().key_source() == "XE_FORGE_API_KEY"
    monkeypatch.delenv("XE_FORGE_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET")
    assert load_settings().key_source() == "ANTHROPIC_API_KEY"


def test_an_empty_provider_variable_is_not_a_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert Settings().key_source() is None


# ---- every run option that is parsed reaches the run ------------------------------------------------

KERNEL = Path(__file__).parent / "pipeline" / "fixtures" / "scale_relu" / "kernel.py"
RUN_ENV = {"XE_FORGE_DEVICE": "cpu", "XE_FORGE_TARGET": "nvidia-sm90", "XE_FORGE_ENGINE": "rules",
           "XE_FORGE_MODEL": "openai/env-model", "XE_FORGE_MAX_ITERS": "2", "XE_FORGE_TIMEOUT": "77",
           "XE_FORGE_TRIALS": "5", "XE_FORGE_RUN_DIR": "env-runs", "XE_FORGE_PROFILE": "1"}
FROM_ENV = {"device": "cpu", "target": "nvidia-sm90", "engine": "rules", "model": "openai/env-model", "max_iters": 2,
            "timeout": 77.0, "trials": 5, "run_dir": Path("env-runs"), "profile": True}


class Captured(Exception):
    """Raised by a stand-in once it has recorded what it was given."""


def _capture(monkeypatch, module, name: str) -> dict:
    seen: dict = {}

    def fake(request, *args, **kwargs):
        seen["request"] = request
        raise Captured

    monkeypatch.setattr(module, name, fake)
    return seen


def _set_env(monkeypatch, values: dict[str, str]) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def test_optimize_takes_every_run_option_from_the_environment(monkeypatch):
    import xe_forge.pipeline.run as run_module

    _set_env(monkeypatch, RUN_ENV)
    seen = _capture(monkeypatch, run_module, "optimize")
    result = CliRunner().invoke(app, ["optimize", str(KERNEL)])
    assert isinstance(result.exception, Captured), result.output
    assert {k: getattr(seen["request"], k) for k in FROM_ENV} == FROM_ENV


def test_flags_override_the_environment_for_optimize(monkeypatch):
    import xe_forge.pipeline.run as run_module

    _set_env(monkeypatch, RUN_ENV)
    seen = _capture(monkeypatch, run_module, "optimize")
    CliRunner().invoke(app, ["optimize", str(KERNEL), "--device", "auto", "--target", "intel-xe2", "--engine", "llm",
                             "--model", "flag-model", "--max-iters", "1", "--timeout", "9", "--trials", "1",
                             "--run-dir", "flag-runs", "--no-profile"])
    request = seen["request"]
    assert (request.device, request.target, request.engine, request.model) == ("auto", "intel-xe2", "llm", "flag-model")
    assert (request.max_iters, request.timeout, request.trials, request.run_dir) == (1, 9.0, 1, Path("flag-runs"))
    assert request.profile is False


def test_batch_takes_every_run_option_from_the_environment(monkeypatch, tmp_path):
    import xe_forge.batch.runner as runner_module

    _set_env(monkeypatch, RUN_ENV)
    seen = _capture(monkeypatch, runner_module, "run_batch")
    result = CliRunner().invoke(app, ["batch", str(tmp_path), "--variant", "ci"])
    assert isinstance(result.exception, Captured), result.output
    run = seen["request"].run
    assert {k: getattr(run, k) for k in FROM_ENV if k != "run_dir"} == {k: v for k, v in FROM_ENV.items()
                                                                        if k != "run_dir"}
    assert run.variant == "ci"


def test_the_run_gives_the_evaluator_device_target_timeout_and_trials(monkeypatch, tmp_path):
    """What the request says is what the one evaluator is built with."""
    import xe_forge.pipeline.run as run_module

    seen: dict = {}

    def fake_evaluator(device, target, **kwargs):
        seen.update(device=device, target=target, **kwargs)
        raise Captured

    monkeypatch.setattr(run_module, "Evaluator", fake_evaluator)
    request = RunRequest(kernel=str(KERNEL), device="cpu", target="nvidia-sm90", engine="rules", timeout=12.0,
                         trials=4, run_dir=tmp_path / "runs")
    with pytest.raises(Captured):
        run_module.optimize(request, load_settings())
    assert (seen["device"], seen["target"], seen["timeout"], seen["trials"]) == ("cpu", "nvidia-sm90", 12.0, 4)
    (run_dir,) = (tmp_path / "runs").iterdir()  # the run directory is made under request.run_dir
    assert RunRequest.model_validate_json((run_dir / "args.json").read_text()).trials == 4


@pytest.mark.parametrize("env", ["1", "0"])
def test_the_profile_setting_gives_the_run_its_profiler(monkeypatch, tmp_path, env):
    """XE_FORGE_PROFILE (or --profile) -> RunRequest.profile -> a ProfileSession on the run context, kept in
    the run directory with the evaluator's device, target and timeout; none without it."""
    import xe_forge.pipeline.run as run_module
    from xe_forge.profile.session import ProfileSession

    monkeypatch.setenv("XE_FORGE_PROFILE", env)
    seen: dict = {}

    def fake_drive(ctx, *args, **kwargs):
        seen["ctx"] = ctx
        raise Captured

    monkeypatch.setattr(run_module, "_drive", fake_drive)
    request = RunRequest.from_settings(load_settings(device="cpu", engine="rules", timeout=33.0,
                                                     run_dir=tmp_path / "runs"), kernel=str(KERNEL))
    with pytest.raises(Captured):
        run_module.optimize(request, load_settings())
    profiler = seen["ctx"].profiler
    if env == "0":
        assert profiler is None
        return
    assert isinstance(profiler, ProfileSession)
    assert (profiler.device, profiler.target, profiler.timeout) == ("cpu", seen["ctx"].target, 33.0)
    assert profiler.dir == seen["ctx"].run_dir / "profiles"


def test_engine_setting_decides_the_engine(monkeypatch):
    from xe_forge.pipeline.run import resolve_engine

    monkeypatch.setenv("XE_FORGE_MODEL", "openai/some-model")
    assert resolve_engine(load_settings().engine, load_settings()) == "llm"
    monkeypatch.setenv("XE_FORGE_ENGINE", "rules")
    assert resolve_engine(load_settings().engine, load_settings()) == "rules"
    monkeypatch.setenv("XE_FORGE_ENGINE", "magic")
    with pytest.raises(InputError, match="XE_FORGE_ENGINE"):
        load_settings()


@pytest.mark.parametrize("command", ["optimize", "check"])
def test_an_unknown_device_from_the_environment_is_bad_input(monkeypatch, command):
    monkeypatch.setenv("XE_FORGE_DEVICE", "tpu")
    result = CliRunner().invoke(app, [command, str(KERNEL)])
    assert result.exit_code == 2 and "unknown device 'tpu'" in result.output


def test_an_unknown_target_from_the_environment_is_bad_input(monkeypatch):
    monkeypatch.setenv("XE_FORGE_DEVICE", "cpu")
    monkeypatch.setenv("XE_FORGE_TARGET", "intel-xe99")
    result = CliRunner().invoke(app, ["check", str(KERNEL)])
    assert result.exit_code == 2 and "unknown target 'intel-xe99'" in result.output


def test_a_run_request_round_trips_through_args_json_without_the_key(monkeypatch):
    monkeypatch.setenv("XE_FORGE_API_KEY", SECRET)
    request = RunRequest.from_settings(load_settings(), kernel="k.py", stages="dtype")
    assert SECRET not in request.model_dump_json()
    assert RunRequest.model_validate_json(request.model_dump_json()) == request
