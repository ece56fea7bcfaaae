"""`batch --ray` on a real Ray cluster: two nodes on 127.0.0.1 (ray_cluster.py), 1 CPU and one fake GPU each.

A batch over the fixture problems spreads over both nodes and gives the local runner's results; a node
killed under a running problem loses only that problem, which is rerun on the other node, and leaves no
process behind; a driver killed mid-batch and restarted with --resume finishes without rerunning what
was finished. Every node is killed by its processes' ids at the end (never `ray stop`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from xe_forge.batch.report import export_trajectories
from xe_forge.batch.runner import run_batch
from xe_forge.batch.store import BatchStore
from xe_forge.config import RunRequest
from xe_forge.pipeline.status import CORRECT_UNTIMED, NO_IMPROVEMENT

from .conftest import PROBLEMS, SEEDS
from .ray_cluster import LocalRayCluster, processes_with

pytest.importorskip("ray")
# a cluster start is ~30 s, each problem several seconds; `cluster`: run in a pytest process of their own
# (README's test command), since beside pytest-xdist's workers on 2 cores the nodes missed their start-up
pytestmark = [pytest.mark.slow, pytest.mark.cluster]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRayCluster]:
    c = LocalRayCluster(tmp_path_factory.mktemp("ray"), uuid.uuid4().hex[:8], gpus=1)
    try:
        c.start(0)
        c.start(1)
        yield c
    finally:
        c.stop()
    time.sleep(1)
    assert processes_with(c.marker(0)) == processes_with(c.marker(1)) == []


@pytest.fixture
def nodes(cluster: LocalRayCluster) -> dict[int, str]:
    """Both nodes up (a test may have killed one): {index: Ray node id}."""
    for index in (0, 1):
        if index not in cluster.nodes:
            cluster.start(index)
    return cluster.node_ids()


def _results(out: Path) -> dict[int, dict]:
    return {r["id"]: r for r in BatchStore(out / "batch.sqlite").results()}


def _problem_processes(marker: str) -> list[int]:
    return [p for p in processes_with(marker) if "-m xe_forge.batch.child " in _cmdline(p)]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_a_batch_spreads_over_both_nodes_with_the_local_runners_results(offline_env, options, cluster, nodes,
                                                                        tmp_path):
    """device auto on a cluster with GPUs: one (fake) GPU per task; the problems still run the interpreter."""
    out = tmp_path / "out"
    s = run_batch(options(out, only="1-3,5", device="auto", ray=cluster.address))
    rows = {r["id"]: r for r in s["per_problem"]}
    assert rows[1]["status"] == CORRECT_UNTIMED and rows[1]["correct"]
    assert not rows[2]["correct"] and "cannot be verified" in rows[2]["reason"]  # a constant reference
    assert not rows[3]["correct"] and "SIGABRT" in rows[3]["reason"]
    assert rows[5]["status"] == "skipped"
    assert (s["problems"], s["correct"], s["workers"]) == (4, 1, 2)  # one slot per GPU of the cluster
    assert {r["node"] for r in _results(out).values()} == set(nodes.values())  # both nodes took problems
    for pid in (1, 2):  # the run directories came back to the driver, in the driver's paths
        (run_dir,) = (out / "runs").glob(f"p{pid:03d}-*")
        assert (run_dir / "report.json").is_file() and (run_dir / "output.py").is_file() == (pid == 1)
        args = RunRequest.model_validate_json((run_dir / "args.json").read_text())
        assert args.reference == str(PROBLEMS / f"{run_dir.name[5:]}.py") and args.kernel.startswith(str(SEEDS))
        assert args.run_dir == out / "runs"
    assert (out / "summary.md").is_file() and "2_RowMax_Subtract" in (out / "report.html").read_text()
    assert export_trajectories(out, tmp_path / "t.jsonl") >= 1


def test_a_node_killed_mid_batch_loses_only_its_problem_which_reruns_on_the_other(offline_env, options, cluster,
                                                                                  nodes, tmp_path):
    out = tmp_path / "out"
    done: dict[str, object] = {}
    batch = threading.Thread(target=lambda: done.update(s=run_batch(options(out, only="1,2", ray=cluster.address))))
    batch.start()
    try:
        _wait(lambda: _problem_processes(cluster.marker(1)), 120, "a problem process on node 1")
        time.sleep(2)  # well into it: its evaluation worker is starting
        on_node_1 = processes_with(cluster.marker(1))
        cluster.kill(1)
    finally:
        batch.join(timeout=400)
    assert not batch.is_alive()
    _wait(lambda: not any(Path(f"/proc/{p}").exists() for p in on_node_1), 15, "node 1's processes to end")
    rows = _results(out)
    by_name = {r["name"]: r for r in rows.values()}
    assert by_name["1_Scale_Shift"]["correct"] and by_name["1_Scale_Shift"]["status"] in {CORRECT_UNTIMED,
                                                                                         NO_IMPROVEMENT}
    assert "cannot be verified" in by_name["2_RowMax_Subtract"]["reason"]  # ran to its verdict, not lost
    assert done["s"]["correct"] == 1
    assert {r["node"] for r in rows.values()} == {nodes[0]}  # the lost problem was rerun on the head


def test_a_killed_driver_resumed_against_the_same_cluster_reruns_unfinished_problems(offline_env, options, cluster,
                                                                                     nodes, tmp_path):
    """The first driver is the CLI with XE_FORGE_RAY_ADDRESS=auto (Ray's RAY_ADDRESS names the cluster).

    Problem 5 has no seed and this machine neither a GPU to lower it on nor an LLM: an environment skip
    (exit 3), which --resume retries like the problem left running. That finished problems are not run
    again is the runner's choice before any executor (tests/batch/test_batch_runs.py checks it)."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "xe_forge", "batch", str(PROBLEMS), "--seeds", str(SEEDS), "--only", "2,5",
           "--out", str(out), "--device", "cpu", "--variant", "ci", "--stages", "dtype", "--max-iters", "1"]
    env = {**os.environ, "XE_FORGE_RAY_ADDRESS": "auto", "RAY_ADDRESS": cluster.address}
    driver = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        def one_done_one_running() -> bool:
            statuses = {r["status"] for r in _results(out).values()} if (out / "batch.sqlite").is_file() else set()
            assert driver.poll() is None, "the driver finished before it could be killed"
            return "skipped" in statuses and "running" in statuses
        _wait(one_done_one_running, 180, "problem 5 finished and problem 2 running")
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    before = _results(out)
    assert before[2]["status"] == "running" and before[5]["status"] == "skipped"
    # Ray ends the dead driver's tasks, and their problem processes follow their workers
    _wait(lambda: not (_problem_processes(cluster.marker(0)) or _problem_processes(cluster.marker(1))), 60,
          "the killed driver's problem processes to end")

    s = run_batch(options(out, only="2,5", resume=True, ray=cluster.address))
    after = _results(out)
    assert before[5]["exit_code"] == 3 and after[5]["status"] == "skipped" and after[5]["attempts"] == 2
    assert after[2]["attempts"] == 2 and "cannot be verified" in after[2]["reason"]  # run to its verdict again
    assert after[2]["node"] in nodes.values()
    assert s["problems"] == 2 and s["correct"] == 0
