"""The real executable, as a user starts it: ``tidelog-server [config] [--opt val]``.

Start-up on a free port, the data directory, a redis.conf-style config file
with command-line overrides, config errors (Redis's FATAL CONFIG FILE ERROR
report and a non-zero exit), a clean exit on SIGTERM; then Redis's own tools,
``redis-cli`` and ``redis-benchmark`` (Debian's redis-tools), against it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

import tidelog
from tests.support.redis_oracle import free_port

STARTUP_TIMEOUT = 30.0


def server_command() -> list[str]:
    """The installed entry point next to this Python, else ``python -m``."""
    entry = Path(sys.executable).parent / "tidelog-server"
    if entry.exists():
        return [str(entry)]
    return [sys.executable, "-m", "tidelog.server.main"]


def server_env() -> dict[str, str]:
    """Our environment, with tidelog importable even without an install."""
    env = dict(os.environ)
    src = str(Path(tidelog.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    return env


class ServerProcess:
    """tidelog-server in a subprocess; output goes to files (never a full pipe)."""

    def __init__(self, args: list[str], workdir: Path, port: int | None = None) -> None:
        self.port = port
        self.workdir = workdir
        self.stdout_path = workdir / f"server-{id(self)}.out"
        self.stderr_path = workdir / f"server-{id(self)}.err"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(server_command() + args, cwd=workdir, env=server_env(),
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_ready(self) -> None:
        """Until PING answers; fails early, with the output, if the process exits."""
        assert self.port is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"tidelog-server exited with {self.proc.returncode}\n"
                            f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}")
            try:
                with redis.Redis(port=self.port, socket_timeout=5,
                                 socket_connect_timeout=1) as client:
                    if client.ping():
                        return
            except redis.ConnectionError as exc:
                last_error = exc
            time.sleep(0.05)
        pytest.fail(f"tidelog-server did not answer PING on port {self.port} within "
                    f"{STARTUP_TIMEOUT} s ({last_error})\nstdout:\n{self.stdout}\n"
                    f"stderr:\n{self.stderr}")

    def client(self) -> redis.Redis:
        assert self.port is not None
        return redis.Redis(port=self.port, socket_timeout=30, decode_responses=True)

    def wait(self, timeout: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"tidelog-server still running after {timeout} s\n"
                        f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}")

    def terminate(self, timeout: float = 30.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def start_server(tmp_path):
    """start_server(args, port=...) -> a running ServerProcess; all killed afterwards."""
    started: list[ServerProcess] = []

    def start(args: list[str], port: int | None = None, ready: bool = True) -> ServerProcess:
        proc = ServerProcess(args, tmp_path, port)
        started.append(proc)
        if ready:
            proc.wait_ready()
        return proc

    yield start
    for proc in started:
        proc.kill()


def run_exit(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the server expecting it to exit by itself (bad config, --version)."""
    return subprocess.run(server_command() + args, cwd=cwd, env=server_env(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


# -- start-up, config, shutdown ----------------------------------------------------------

def test_starts_answers_ping_and_creates_dir(start_server, tmp_path):
    port = free_port()
    data = tmp_path / "not" / "yet" / "there"
    srv = start_server(["--port", str(port), "--dir", str(data)], port=port)
    with srv.client() as client:
        assert client.ping() is True
        assert client.echo("hello") == "hello"
    assert data.is_dir()
    assert "Ready to accept connections" in srv.stdout
    assert srv.terminate() == 0


def test_config_file_with_command_line_overrides(start_server, tmp_path):
    port = free_port()
    data = tmp_path / "data dir with spaces"
    conf = tmp_path / "tidelog.conf"
    conf.write_text(
        "# a redis.conf-style file\n"
        "\n"
        f"port {free_port()}\n"                   # overridden on the command line
        "bind 127.0.0.1\n"
        f'dir "{data}"\n'
        "maxclients 100\n"
        "timeout 0\n"
        "hz 20\n"
        "stream-node-max-entries 50\n"
        "stream-node-max-bytes 2kb\n"
        "   loglevel   verbose   \n"
        "proto-max-bulk-len 2mb\n",
        encoding="utf-8")
    srv = start_server([str(conf), "--port", str(port), "--maxclients", "200",
                        "--stream-node-max-entries", "7", "--timeout", "300"], port=port)
    assert data.is_dir()
    with srv.client() as client:
        assert client.config_get("port") == {"port": str(port)}
        assert client.config_get("maxclients") == {"maxclients": "200"}
        assert client.config_get("stream-node-max-entries") == {"stream-node-max-entries": "7"}
        assert client.config_get("timeout") == {"timeout": "300"}
        assert client.config_get("hz") == {"hz": "20"}
        assert client.config_get("stream-node-max-bytes") == {"stream-node-max-bytes": "2048"}
        assert client.config_get("proto-max-bulk-len") == {"proto-max-bulk-len": "2097152"}
        assert client.config_get("loglevel") == {"loglevel": "verbose"}
        assert client.config_get("dir")["dir"] == str(data)
    assert srv.terminate() == 0


FATAL = "FATAL CONFIG FILE ERROR"


@pytest.mark.parametrize("conf_text, args, why", [
    ("no-such-option yes\n", [], "Bad directive or wrong number of arguments"),
    ("port 6379 6380\n", [], "wrong number of arguments"),
    ("port notanumber\n", [], "argument couldn't be parsed into an integer"),
    ("maxclients 0\n", [], "argument must be between 1 and"),
    ('dir "unbalanced\n', [], "Unbalanced quotes in configuration line"),
    (None, ["--no-such-option", "yes"], "Bad directive or wrong number of arguments"),
    (None, ["--port", "99999"], "argument must be between 0 and 65535 inclusive"),
    (None, ["--loglevel", "loud"], "argument(s) must be one of the following"),
])
def test_bad_config_exits_with_fatal_report(tmp_path, conf_text, args, why):
    argv = list(args)
    if conf_text is not None:
        conf = tmp_path / "bad.conf"
        conf.write_text("# comment\n" + conf_text, encoding="utf-8")
        argv = [str(conf), *argv]
    result = run_exit(argv, tmp_path)
    assert result.returncode != 0
    assert FATAL in result.stderr
    assert why in result.stderr
    assert ">>> '" in result.stderr
    if conf_text is not None:
        assert "at line 2" in result.stderr  # the comment is line 1


def test_missing_config_file_exits_nonzero(tmp_path):
    result = run_exit([str(tmp_path / "missing.conf")], tmp_path)
    assert result.returncode != 0
    assert "can't open config file" in result.stderr


def test_version_flag(tmp_path):
    result = run_exit(["--version"], tmp_path)
    assert result.returncode == 0
    assert re.search(r"v=\d+\.\d+\.\d+", result.stdout)


def test_port_in_use_exits_nonzero(start_server, tmp_path):
    port = free_port()
    first = start_server(["--port", str(port), "--dir", str(tmp_path / "a")], port=port)
    second = start_server(["--port", str(port), "--dir", str(tmp_path / "b")], ready=False)
    assert second.wait(60) != 0
    with first.client() as client:
        assert client.ping() is True
    assert first.terminate() == 0


def test_sigterm_exits_cleanly_with_clients_connected(start_server, tmp_path):
    port = free_port()
    pidfile = tmp_path / "tidelog.pid"
    sock = tmp_path / "tidelog.sock"
    srv = start_server(["--port", str(port), "--dir", str(tmp_path / "data"),
                        "--pidfile", str(pidfile), "--unixsocket", str(sock)], port=port)
    assert pidfile.read_text().strip() == str(srv.proc.pid)
    assert sock.exists()
    client = srv.client()
    try:
        assert client.ping() is True
        assert srv.terminate() == 0
    finally:
        client.close()
    assert not pidfile.exists()
    assert not sock.exists()
    assert "Traceback" not in srv.stdout + srv.stderr


def test_sigint_exits_cleanly(start_server, tmp_path):
    port = free_port()
    srv = start_server(["--port", str(port), "--dir", str(tmp_path / "data")], port=port)
    srv.proc.send_signal(signal.SIGINT)
    assert srv.wait() == 0


# -- redis-cli and redis-benchmark ------------------------------------------------------------

def redis_tool(name: str) -> str:
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian package redis-tools; "
                    "`make test` installs it when run as root)")
    return path


@pytest.fixture(scope="module")
def running_server(tmp_path_factory):
    """One tidelog-server process shared by the redis-cli/redis-benchmark tests."""
    workdir = tmp_path_factory.mktemp("tools")
    port = free_port()
    srv = ServerProcess(["--port", str(port), "--dir", str(workdir / "data")], workdir, port)
    try:
        srv.wait_ready()
        yield srv
    finally:
        if srv.proc.poll() is None:
            assert srv.terminate() == 0
        assert "Traceback" not in srv.stdout + srv.stderr, srv.stdout + srv.stderr


def run_tool(argv: list[str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, (
        f"{argv} exited with {result.returncode}\nstdout:\n{result.stdout}\n"
        f"stderr:\n{result.stderr}")
    return result


def test_redis_cli_ping(running_server):
    cli = redis_tool("redis-cli")
    result = run_tool([cli, "-p", str(running_server.port), "PING"])
    assert result.stdout.strip() == "PONG"


def test_redis_cli_xadd_then_xlen(running_server):
    cli = redis_tool("redis-cli")
    port = str(running_server.port)
    run_tool([cli, "-p", port, "DEL", "cli-stream"])
    added = run_tool([cli, "-p", port, "XADD", "cli-stream", "*", "f", "v"]).stdout.strip()
    assert re.fullmatch(r"\d+-\d+", added), added
    assert run_tool([cli, "-p", port, "XLEN", "cli-stream"]).stdout.strip() == "1"
    entries = run_tool([cli, "-p", port, "XRANGE", "cli-stream", "-", "+"]).stdout.split()
    assert entries == [added, "f", "v"]


def test_redis_benchmark_ping(running_server):
    bench = redis_tool("redis-benchmark")
    run_tool([bench, "-p", str(running_server.port), "-n", "2000", "-c", "4", "-P", "16",
              "-q", "-t", "ping"])
    with running_server.client() as client:
        assert client.ping() is True


def test_redis_benchmark_custom_xadd(running_server):
    bench = redis_tool("redis-benchmark")
    with running_server.client() as client:
        client.delete("bench")
    run_tool([bench, "-p", str(running_server.port), "-n", "2000", "-q",
              "XADD", "bench", "*", "f", "v"])
    with running_server.client() as client:
        assert client.xlen("bench") == 2000
