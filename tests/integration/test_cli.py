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
from pathlib import Path

import pytest
import redis

import tidelog
from tests.support.processes import ProcessGroup, server_command, server_env
from tests.support.redis_oracle import free_port


def run_exit(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the server expecting it to exit by itself (bad config, --version)."""
    return subprocess.run(server_command() + args, cwd=cwd, env=server_env(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


# -- start-up, config, shutdown ----------------------------------------------------------

def test_starts_answers_ping_and_creates_dir(processes, tmp_path):
    port = free_port()
    data = tmp_path / "not" / "yet" / "there"
    srv = processes.tidelog(["--port", str(port), "--dir", str(data)], port=port)
    with srv.client() as client:
        assert client.ping() is True
        assert client.echo("hello") == "hello"
    assert data.is_dir()
    assert "Ready to accept connections" in srv.stdout
    assert srv.terminate() == 0


def test_config_file_with_command_line_overrides(processes, tmp_path):
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
    srv = processes.tidelog([str(conf), "--port", str(port), "--maxclients", "200",
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


@pytest.mark.parametrize("conf_text, why", [
    ("no-such-option yes\n", "Bad directive or wrong number of arguments"),
    ("port 6379 6380\n", "wrong number of arguments"),
    ("port notanumber\n", "argument couldn't be parsed into an integer"),
    ("maxclients 0\n", "argument must be between 1 and"),
    ('dir "unbalanced\n', "Unbalanced quotes in configuration line"),
])
def test_bad_config_file_exits_with_redis_report(tmp_path, conf_text, why):
    conf = tmp_path / "bad.conf"
    conf.write_text("# comment\n" + conf_text, encoding="utf-8")
    result = run_exit([str(conf)], tmp_path)
    assert result.returncode == 1
    assert FATAL in result.stderr
    assert why in result.stderr
    assert ">>> '" in result.stderr
    assert "at line 2" in result.stderr  # the comment is line 1


@pytest.mark.parametrize("args, why", [
    (["--no-such-option", "yes"], "Bad directive or wrong number of arguments"),
    (["--port", "99999"], "argument must be between 0 and 65535 inclusive"),
    (["--loglevel", "loud"], "argument(s) must be one of the following"),
    (["--port"], "wrong number of arguments"),
])
def test_bad_option_exits_with_one_line(tmp_path, args, why):
    result = run_exit(args, tmp_path)
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"tidelog-server: bad option '{' '.join(args)}': {why}")
    assert "--help" in lines[0]


def test_stray_argument_exits_with_one_line(tmp_path):
    conf = tmp_path / "ok.conf"
    conf.write_text("port 0\n", encoding="utf-8")
    result = run_exit([str(conf), "stray"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "tidelog-server: unexpected argument 'stray' (options are --name value; "
        "see tidelog-server --help)"]


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_unreadable_config_file_exits_with_one_line(tmp_path, make):
    path = tmp_path / "tidelog.conf"
    if make == "directory":
        path.mkdir()        # unreadable as a file, even for root
    result = run_exit([str(path)], tmp_path)
    assert result.returncode == 1
    reason = "No such file or directory" if make == "missing" else "Is a directory"
    assert result.stderr.splitlines() == [
        f"Fatal error, can't open config file '{path}': {reason}"]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage(tmp_path, flag):
    result = run_exit([flag], tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: tidelog-server [/path/to/tidelog.conf]")
    assert "--version" in result.stdout and FATAL not in result.stdout
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("flag", ["--version", "-v"])
def test_version_flag(tmp_path, flag):
    result = run_exit([flag], tmp_path)
    assert result.returncode == 0
    assert re.fullmatch(rf"Tidelog server v={re.escape(tidelog.__version__)} "
                        rf"redis_version=\d+\.\d+\.\d+\n", result.stdout)


def test_port_in_use_exits_with_one_line_and_creates_nothing(processes, tmp_path):
    port = free_port()
    first = processes.tidelog(["--port", str(port), "--dir", str(tmp_path / "a")], port=port)
    second = processes.tidelog(["--port", str(port), "--dir", str(tmp_path / "b")], ready=False)
    assert second.wait(60) == 1
    lines = second.stdout.splitlines()
    assert len(lines) == 1, second.stdout
    assert lines[0].endswith(f"Could not listen on 127.0.0.1:{port} (tcp): Address already "
                              "in use; is another server running there? (--port, --bind)")
    assert "Traceback" not in second.stdout + second.stderr
    assert not (tmp_path / "b").exists()
    with first.client() as client:
        assert client.ping() is True
    assert first.terminate() == 0


def test_sigterm_exits_cleanly_with_clients_connected(processes, tmp_path):
    port = free_port()
    pidfile = tmp_path / "tidelog.pid"
    sock = tmp_path / "tidelog.sock"
    srv = processes.tidelog(["--port", str(port), "--dir", str(tmp_path / "data"),
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


def test_sigint_exits_cleanly(processes, tmp_path):
    port = free_port()
    srv = processes.tidelog(["--port", str(port), "--dir", str(tmp_path / "data")], port=port)
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
    group = ProcessGroup(workdir)
    try:
        srv = group.tidelog(["--port", str(port), "--dir", str(workdir / "data")], port=port)
        yield srv
        assert srv.terminate() == 0
        assert "Traceback" not in srv.stdout + srv.stderr, srv.stdout + srv.stderr
    finally:
        group.stop_all()


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


def test_rename_command_in_the_configuration_file(processes, tmp_path) -> None:
    port = free_port()
    conf = tmp_path / "renamed.conf"
    conf.write_text(f'port {port}\ndir {tmp_path}\nsave ""\nrename-command FLUSHALL ""\n'
                    "rename-command CONFIG settings\n")
    srv = processes.tidelog([str(conf)], port=port)
    c = srv.client()
    with pytest.raises(redis.ResponseError, match="unknown command 'FLUSHALL'"):
        c.flushall()
    assert c.execute_command("SETTINGS", "GET", "port") == {"port": str(port)}
    bad = tmp_path / "bad.conf"
    bad.write_text(f"port {free_port()}\ndir {tmp_path}\nrename-command NOSUCH x\n")
    failed = processes.tidelog([str(bad)], ready=False)
    assert failed.wait() == 1
    assert "No such command in rename-command: nosuch" in failed.stdout + failed.stderr
