"""The benchmark's server handling (bench/servers.py): a server it starts is
stopped by ``stop()``, also when it was started through a wrapper (a
``--tidelog-cmd`` such as ``sh -c ...`` or a profiler), whose child the
server then is."""

from __future__ import annotations

import importlib
import os
import shlex
import signal
from pathlib import Path

import pytest

from tests.support.processes import server_command, server_env

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def servers(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("servers")


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_stop_stops_a_server_started_through_a_wrapper(servers):
    command = " ".join(shlex.quote(a) for a in server_command())
    # The shell stays the parent (the "; true" keeps it from exec'ing the server).
    wrapped = ["/bin/sh", "-c", command + " --port {port} --dir {dir} --save ''; true"]
    srv = servers.Server("tidelog", wrapped, env=server_env())
    server_pid = 0
    try:
        srv.start()
        with servers.resp.Client(srv.port) as client:
            info = client.call("INFO", "server").decode()
        server_pid = int(info.split("process_id:")[1].split()[0])
        assert server_pid != srv.pid  # the server is the shell's child
        srv.stop()
        assert not running(server_pid)
    finally:
        srv.stop()
        if server_pid and running(server_pid):
            os.kill(server_pid, signal.SIGKILL)
