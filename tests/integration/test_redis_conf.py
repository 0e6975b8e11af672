"""Any redis.conf starts Tidelog: Debian's stock file (detaching with
``daemonize yes``, its pidfile and log file), Redis 8's stock file at its
defaults, a file CONFIG REWRITE wrote, ``include``; an unknown directive
stops the start as redis-server stops; ``supervised systemd`` tells
$NOTIFY_SOCKET; the log lines read as Redis's.

Real processes, each killed in a fixture finaliser (the detached ones by the
pid their pidfile names).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
import redis

from tests.support.processes import server_command, server_env
from tests.support.redis_oracle import REDIS_SERVER, free_port, wait_for_port
from tests.support.waits import wait_until
from tidelog import REDIS_VERSION

DEBIAN_CONF = Path("/etc/redis/redis.conf")
REDIS8_CONF = Path(__file__).resolve().parent / "data" / "redis8-defaults.conf"
LOG_LINE = re.compile(r"^\d+:[MSCX] \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} [.\-*#] ")


def _alive_tidelog(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"tidelog" in fh.read()
    except OSError:
        return False


@pytest.fixture
def detached():
    """Pids of detached servers a test started; SIGKILLed (with their
    session) when the test ends if still running."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _alive_tidelog(pid):
            try:
                os.killpg(pid, signal.SIGKILL)  # the server leads its own session
            except ProcessLookupError:
                pass


def _run(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(server_command() + args, cwd=cwd, env=kw.pop("env", server_env()),
                          capture_output=True, text=True, timeout=60, **kw)


def _debian_copy(tmp_path: Path, extra: str = "") -> Path:
    """Debian's file with its paths moved into tmp_path (dir, logfile,
    pidfile, unixsocket); every other line as it is."""
    if not DEBIAN_CONF.exists():
        pytest.skip("Debian's redis-server package (its /etc/redis/redis.conf) is not installed")
    moved = {"dir": tmp_path / "data", "logfile": tmp_path / "redis-server.log",
             "pidfile": tmp_path / "redis-server.pid", "unixsocket": tmp_path / "redis.sock"}
    (tmp_path / "data").mkdir(exist_ok=True)
    out = []
    for line in DEBIAN_CONF.read_text().split("\n"):
        words = line.split()
        if words and words[0] in moved:
            line = f'{words[0]} "{moved[words[0]]}"'
        out.append(line)
    path = tmp_path / "redis.conf"
    path.write_text("\n".join(out) + extra)
    return path


def test_debian_stock_file_detaches_and_cleans_up(processes, detached, tmp_path):
    conf = _debian_copy(tmp_path)
    port = free_port()
    pidfile = tmp_path / "redis-server.pid"
    logfile = tmp_path / "redis-server.log"
    parent = processes.popen(server_command() + [str(conf), "--port", str(port)],
                             cwd=tmp_path, env=server_env(), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = parent.communicate(timeout=60)
    assert parent.returncode == 0, err           # the parent returns at once ...
    assert out == b"" and err == b""
    wait_until(lambda: pidfile.exists() and pidfile.read_text().endswith("\n"), timeout=30)
    pid = int(pidfile.read_text())
    detached.append(pid)
    assert pid != parent.pid and _alive_tidelog(pid)  # ... the server runs on, detached
    assert os.getsid(pid) == pid                     # in a session of its own
    wait_for_port(port)
    with redis.Redis(port=port, decode_responses=True) as client:
        assert client.ping() is True
        # No-effect directives: the file's values.
        assert client.config_get("tcp-backlog") == {"tcp-backlog": "511"}
        assert client.config_get("oom-score-adj-values") == {"oom-score-adj-values": "0 200 800"}
        assert client.config_get("proc-title-template") == {
            "proc-title-template": "{title} {listen-addr} {server-mode}"}
        assert client.config_get("jemalloc-bg-thread") == {"jemalloc-bg-thread": "yes"}
        assert client.config_get("daemonize") == {"daemonize": "yes"}
        assert client.config_get("pidfile") == {"pidfile": str(pidfile)}
        assert client.config_set("lazyfree-lazy-user-flush", "yes")
        assert client.config_get("lazyfree-lazy-user-flush") == {
            "lazyfree-lazy-user-flush": "yes"}
        try:
            client.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
    wait_until(lambda: not _alive_tidelog(pid), timeout=30)
    assert not pidfile.exists()
    log = logfile.read_text()
    lines = log.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), log
    noted = [line for line in lines if "Accepted, no effect in Tidelog" in line]
    assert len(noted) == 1, log                                   # named once
    for name in ("always-show-logo", "lazyfree-lazy-eviction", "jemalloc-bg-thread",
                 "oom-score-adj-values", "disable-thp"):
        assert name in noted[0]
    assert "tcp-backlog" not in noted[0]                           # applied
    assert f"{pid}:M " in log and "Ready to accept connections" in log


def test_redis8_stock_file_starts(processes, tmp_path):
    port = free_port()
    srv = processes.tidelog([str(REDIS8_CONF), "--port", str(port), "--dir", str(tmp_path / "d"),
                             "--pidfile", str(tmp_path / "redis.pid")], port=port)
    with srv.client() as client:
        assert client.ping() is True
        assert client.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}
        assert client.config_get("cluster-config-file") == {"cluster-config-file": "nodes-6379.conf"}
        assert client.config_get("shutdown-on-sigterm") == {"shutdown-on-sigterm": "default"}
    assert (tmp_path / "redis.pid").read_text() == f"{srv.proc.pid}\n"   # pidfile without daemonize
    assert srv.terminate() == 0
    assert not (tmp_path / "redis.pid").exists()
    lines = srv.stdout.splitlines()
    assert all(LOG_LINE.match(line) for line in lines), srv.stdout
    assert sum("Accepted, no effect in Tidelog" in line for line in lines) == 1


def test_config_rewrite_output_starts_again(processes, tmp_path):
    conf = tmp_path / "redis.conf"
    shutil.copy(REDIS8_CONF, conf)
    port = free_port()
    args = [str(conf), "--port", str(port), "--dir", str(tmp_path / "d"),
            "--pidfile", str(tmp_path / "redis.pid")]
    srv = processes.tidelog(args, port=port)
    with srv.client() as client:
        client.config_set("active-expire-effort", "7")
        client.config_set("maxmemory-clients", "5%")
        client.config_set("slave-priority", "42")
        client.config_set("proc-title-template", "{title} {port}")
        assert client.config_rewrite()
    assert srv.terminate() == 0
    text = conf.read_text()
    assert "active-expire-effort 7" in text and "replica-priority 42" in text
    assert f"port {port}" in text
    srv = processes.tidelog([str(conf)], port=port)
    with srv.client() as client:
        assert client.config_get("active-expire-effort") == {"active-expire-effort": "7"}
        assert client.config_get("maxmemory-clients") == {"maxmemory-clients": "5%"}
        assert client.config_get("replica-priority") == {"replica-priority": "42"}
        assert client.config_get("proc-title-template") == {"proc-title-template": "{title} {port}"}
    assert srv.terminate() == 0


def test_redis_servers_rewrite_of_debians_file_starts_tidelog(processes, tmp_path):
    """redis-server 7.0.15 rewrites Debian's file (CONFIG REWRITE: quoted
    paths, units, one save line per point, a user line); Tidelog starts from it."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    conf = _debian_copy(tmp_path)
    port = free_port()
    redis_proc = processes.popen([REDIS_SERVER, str(conf), "--port", str(port),
                                  "--daemonize", "no"], cwd=tmp_path,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port)
    with redis.Redis(port=port, decode_responses=True) as client:
        client.config_set("maxmemory-clients", "5%")
        client.config_set("slave-priority", "42")
        client.config_set("lazyfree-lazy-user-flush", "yes")
        assert client.config_rewrite()
        try:
            client.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
    redis_proc.wait(30)
    text = conf.read_text()
    assert "# Generated by CONFIG REWRITE" in text and "daemonize no" in text
    srv = processes.tidelog([str(conf)], port=port)
    with srv.client() as client:
        assert client.config_get("maxmemory-clients") == {"maxmemory-clients": "5%"}
        assert client.config_get("replica-priority") == {"replica-priority": "42"}
        assert client.config_get("lazyfree-lazy-user-flush") == {"lazyfree-lazy-user-flush": "yes"}
        assert client.config_get("save") == {"save": "3600 1 300 100 60 10000"}
    assert srv.terminate() == 0


def test_unknown_directive_fails_as_redis_does(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("port 0\n# comment\nno-such-directive yes\n")
    ours = _run([str(conf)], tmp_path)
    assert ours.returncode == 1 and ours.stdout == ""
    assert ours.stderr == (f"\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\n"
                           "Reading the configuration file, at line 3\n"
                           ">>> 'no-such-directive yes'\n"
                           "Bad directive or wrong number of arguments\n")
    if REDIS_SERVER is None:
        return
    theirs = subprocess.run([REDIS_SERVER, str(conf)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert theirs.returncode == ours.returncode
    # The same report, but for the version in the banner.
    assert re.sub(r"\(Redis [^)]*\)", "", theirs.stderr) == re.sub(r"\(Redis [^)]*\)", "",
                                                                   ours.stderr)


def test_unopenable_log_file_fails_as_redis_does(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text(f"port 0\nlogfile {tmp_path / 'no' / 'such' / 'dir.log'}\n")
    ours = _run([str(conf)], tmp_path)
    assert ours.returncode == 1
    assert ours.stderr == (f"\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\n"
                           "Can't open the log file: No such file or directory\n")


def test_include_and_stdin(processes, tmp_path):
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "a.conf").write_text("hz 17\nslave-read-only no\n")
    (tmp_path / "inner.conf").write_text("maxclients 321\n")
    main = tmp_path / "main.conf"
    main.write_text("include conf.d/*.conf\ninclude inner.conf\ntimeout 5\n")
    port = free_port()
    proc = processes.popen(server_command() + [str(main), "-", "--port", str(port)],
                           cwd=tmp_path, env=server_env(), stdin=subprocess.PIPE,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.stdin.write(b"tcp-keepalive 77\n'lazyfree-lazy-expire' \"yes\"\n")
    proc.stdin.close()
    wait_for_port(port)
    with redis.Redis(port=port, decode_responses=True) as client:
        assert client.config_get("hz") == {"hz": "17"}
        assert client.config_get("maxclients") == {"maxclients": "321"}
        assert client.config_get("timeout") == {"timeout": "5"}
        assert client.config_get("replica-read-only") == {"replica-read-only": "no"}
        assert client.config_get("tcp-keepalive") == {"tcp-keepalive": "77"}
        assert client.config_get("lazyfree-lazy-expire") == {"lazyfree-lazy-expire": "yes"}
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0


def test_supervised_systemd_notifies(processes, tmp_path):
    short = Path(tempfile.mkdtemp(prefix="tl-notify-"))  # AF_UNIX paths are short
    try:
        path = short / "notify"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(str(path))
        sock.settimeout(30)
        port = free_port()
        env = dict(server_env(), NOTIFY_SOCKET=str(path))
        proc = processes.popen(server_command() + ["--port", str(port), "--dir", str(tmp_path),
                                                   "--supervised", "systemd",
                                                   "--daemonize", "yes"],
                               cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        messages = [sock.recv(4096).decode(), sock.recv(4096).decode()]
        assert messages == ["STATUS=Ready to accept connections\n", "READY=1\n"]
        assert proc.poll() is None          # supervised: stays in the foreground
        with redis.Redis(port=port) as client:
            assert client.ping() is True
            assert client.info("server")["process_supervised"] == "systemd"
        proc.send_signal(signal.SIGTERM)
        assert sock.recv(4096) == b"STOPPING=1\n"
        assert proc.wait(30) == 0
        sock.close()
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_syslog_enabled_starts(processes, tmp_path):
    port = free_port()
    srv = processes.tidelog(["--port", str(port), "--dir", str(tmp_path), "--syslog-enabled", "yes",
                             "--syslog-ident", "tidelog-test", "--syslog-facility", "local3",
                             "--loglevel", "warning"], port=port)
    with srv.client() as client:
        assert client.config_get("syslog-*") == {"syslog-enabled": "yes",
                                                 "syslog-ident": "tidelog-test",
                                                 "syslog-facility": "local3"}
        assert client.config_set("loglevel", "nothing")
    assert srv.terminate() == 0
    assert "Ready to accept connections" not in srv.stdout   # loglevel warning


def test_replica_log_lines_say_s(processes, tmp_path):
    primary_port, replica_port = free_port(), free_port()
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    primary = processes.tidelog(["--port", str(primary_port), "--dir", str(tmp_path / "p"),
                                 "--save", ""], port=primary_port)
    replica = processes.tidelog(["--port", str(replica_port), "--dir", str(tmp_path / "r"),
                                 "--save", "", "--replicaof", "127.0.0.1", str(primary_port)],
                                port=replica_port)
    with replica.client() as client:
        wait_until(lambda: client.info("replication")["master_link_status"] == "up", timeout=30)
        client.replicaof("no", "one")
        wait_until(lambda: client.info("replication")["role"] == "master", timeout=30)
    assert replica.terminate() == 0 and primary.terminate() == 0
    lines = replica.stdout.splitlines()
    assert all(LOG_LINE.match(line) for line in lines), replica.stdout
    roles = [line.split(" ", 1)[0].split(":")[1] for line in lines]
    assert "S" in roles and roles[-1] == "M", replica.stdout   # a replica, then promoted
    primary_roles = {line.split(" ", 1)[0].split(":")[1] for line in primary.stdout.splitlines()}
    assert "M" in primary_roles and "S" not in primary_roles


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0]


def test_supervised_upstart_stops_itself_when_ready(processes, tmp_path):
    port = free_port()
    env = dict(server_env(), UPSTART_JOB="tidelog-test")
    proc = processes.popen(server_command() + ["--port", str(port), "--dir", str(tmp_path),
                                               "--supervised", "auto"],
                           cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: _state(proc.pid) == "T", timeout=30)   # upstart's "expect stop"
    os.kill(proc.pid, signal.SIGCONT)
    with redis.Redis(port=port, decode_responses=True) as client:
        assert client.ping() is True
        assert client.info("server")["process_supervised"] == "upstart"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0


@pytest.mark.parametrize("kind", ["tidelog", "redis"])
def test_a_relative_log_file_is_inside_dir(processes, tmp_path, kind) -> None:
    """``--dir d --logfile server.log``: the log is d/server.log, not in the
    directory the server was started from (Redis writes its log after it
    changed to ``dir``); redis-server 7.0.15 shown doing the same."""
    data, start = tmp_path / "data", tmp_path / "started-here"
    data.mkdir()
    start.mkdir()
    port = free_port()
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(data),
            "--logfile", "server.log"]
    if kind == "redis":
        if REDIS_SERVER is None:
            pytest.skip("redis-server is not installed")
        processes.popen([REDIS_SERVER, *args], cwd=start, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        processes.popen([*server_command(), *args], cwd=start, env=server_env(),
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
    wait_for_port(port)
    wait_until(lambda: "Ready to accept connections" in (data / "server.log").read_text()
               if (data / "server.log").exists() else False, timeout=30)
    assert not (start / "server.log").exists()
    redis.Redis(port=port).shutdown(nosave=True)
