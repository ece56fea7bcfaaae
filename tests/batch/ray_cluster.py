"""A throwaway Ray cluster of several nodes on 127.0.0.1 (the Ray backend's tests and its benchmark).

Each node is `ray start ... --block` in a session of its own, with its own temp dir and ports, 1 CPU
and a small object store. A node is stopped (or "dies") by killing its session's processes by id:
never `ray stop`, which ends every Ray on the machine, other people's included. Every process of a
node carries XEF_RAY_NODE=<tag>-<index> in its environment, so a test can find what ran where.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HEAD_CONFIG = {"health_check_period_ms": 1000, "health_check_timeout_ms": 1000, "health_check_failure_threshold": 3}
RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session_pids(sid: int) -> list[int]:
    """Processes of session `sid` (a node's processes, Ray workers included, share its session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def processes_with(marker: str) -> list[int]:
    """Live processes whose environment holds `marker` (e.g. 'XEF_RAY_NODE=x-1')."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() + b"\0" in (entry / "environ").read_bytes() + b"\0":
                    if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


class LocalRayCluster:
    """Nodes 0 (the head) .. n-1, each with 1 CPU (and `gpus` fake GPUs) and a resource `node<i>`."""

    def __init__(self, root: Path, tag: str, gpus: int = 0) -> None:
        self.root, self.tag, self.gpus = root, tag, gpus
        self.nodes: dict[int, subprocess.Popen] = {}
        self.address = f"127.0.0.1:{free_port()}"

    def marker(self, index: int) -> str:
        return f"XEF_RAY_NODE={self.tag}-{index}"

    def start(self, index: int) -> None:
        """Start node `index` (0: the head) and wait until the cluster sees it."""
        log = (self.root / f"node{index}.log").open("ab")
        args = [RAY, "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
                "--num-gpus", str(self.gpus), "--object-store-memory", "100000000",
                "--resources", json.dumps({f"node{index}": 1}), "--temp-dir", str(self.root / f"t{index}"),
                "--disable-usage-stats", "--dashboard-agent-listen-port", str(free_port()),
                "--dashboard-agent-grpc-port", str(free_port()), "--metrics-export-port", str(free_port()),
                "--runtime-env-agent-port", str(free_port())]  # no fixed port: two nodes share this machine
        if index == 0:
            args += ["--head", "--port", self.address.split(":")[1], "--include-dashboard", "false",
                     "--dashboard-port", str(free_port()), "--system-config", json.dumps(HEAD_CONFIG)]
        else:
            args += ["--address", self.address]
        env = {**os.environ, "XEF_RAY_NODE": self.marker(index).split("=", 1)[1], "RAY_USAGE_STATS_ENABLED": "0"}
        self.nodes[index] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                                             start_new_session=True)
        self._wait_alive({i for i, p in self.nodes.items() if p.poll() is None})

    def kill(self, index: int) -> None:
        """The node dies at once: every process of its session SIGKILLed (what a lost machine looks like)."""
        proc = self.nodes.pop(index)
        for pid in session_pids(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=30)

    def stop(self) -> None:
        for index in sorted(self.nodes, reverse=True):
            self.kill(index)

    def node_ids(self) -> dict[int, str]:
        """{index: Ray node id} of the live nodes."""
        return {i: n for i, (n, _) in self._alive().items()}

    def _alive(self) -> dict[int, tuple[str, dict]]:
        out = subprocess.run([sys.executable, "-c", _LIST_NODES, self.address], capture_output=True, text=True,
                             timeout=120)
        nodes = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else []
        return {int(k[4:]): (n["NodeID"], n["Resources"]) for n in nodes for k in n["Resources"]
                if k.startswith("node") and k[4:].isdigit()}

    def _wait_alive(self, expected: set[int], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while set(self._alive()) != expected:
            if time.monotonic() > deadline:
                raise RuntimeError(f"Ray nodes {sorted(expected)} did not come up; see {self.root}/node*.log")
            time.sleep(1)


# the node list from a separate process: the test's own process then never holds a Ray connection
_LIST_NODES = """
import json, logging, sys, ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level=logging.ERROR)
print(json.dumps([n for n in ray.nodes() if n["Alive"]]))
"""
