"""Starting, measuring and stopping the servers under test; machine facts.

Every server runs as a child process on a free loopback port with its own
temporary directory, and is always stopped by the caller (``with`` block).
CPU time is read from /proc/PID/stat (utime + stime, plus the times of the
children it has reaped, e.g. a snapshot fork), so the figure covers every
thread of the server process.  That counts in 10 ms ticks; where a few
thousand commands are timed (the consumer-group benchmarks),
``Server.precise_cpu_seconds`` reads the kernel's CPU clock of the process
instead (clock_getcpuclockid(3), to the nanosecond).
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self

import resp

CLK_TCK = os.sysconf("SC_CLK_TCK")


REPO = Path(__file__).resolve().parent.parent


def scrub(text: str) -> str:
    """Keep machine-specific paths out of what is printed and saved."""
    text = text.replace(sys.executable, "python3")
    text = text.replace(str(REPO) + os.sep, "").replace(str(REPO), ".")
    return text.replace(tempfile.gettempdir() + os.sep, "$TMPDIR/")


def log(msg: str) -> None:
    print(scrub(msg), file=sys.stderr, flush=True)


def loadavg() -> str | None:
    """The load averages over 1, 5 and 15 minutes, as /proc/loadavg gives them."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces: split after it.
    return raw[raw.rindex(")") + 2:].split()


def _children(pid: int) -> list[int]:
    """Live descendants of pid (a scan of /proc; cheap at benchmark scale)."""
    by_parent: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields:
                by_parent.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in by_parent.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by pid and its descendants (user + system)."""
    ticks = 0
    for i, p in enumerate([pid] + _children(pid)):
        fields = _stat_fields(p)
        if not fields:
            continue
        # after the name: [0]=state [1]=ppid ... [11]=utime [12]=stime [13]=cutime [14]=cstime
        ticks += int(fields[11]) + int(fields[12])
        if i == 0:
            ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


NCPU = len(os.sched_getaffinity(0))


def _libc():
    try:
        import ctypes
        return ctypes, ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError, ImportError):
        return None, None


def cpu_clock(pid: int) -> Callable[[], float] | None:
    """A function giving pid's CPU seconds to the nanosecond (all its threads,
    from the kernel's per-process CPU clock), or None where there is none.

    /proc/PID/stat counts in 1/CLK_TCK (10 ms) steps, too coarse to time a
    few thousand commands of a fast server; clock_getcpuclockid(3) is not.
    It does not include children (the servers run without forking here)."""
    ctypes, libc = _libc()
    if libc is None:
        return None
    clock = ctypes.c_int()
    try:
        if libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
            return None
        time.clock_gettime_ns(clock.value)
    except (OSError, AttributeError):
        return None
    clock_id = clock.value
    return lambda: time.clock_gettime_ns(clock_id) / 1e9


def machine_busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent not idle (from /proc/stat)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    # cpu user nice system idle iowait irq softirq steal guest guest_nice
    values = [int(v) for v in fields[1:9]]
    busy = sum(values) - values[3] - values[4]
    return busy / CLK_TCK


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM if the benchmark itself dies (Linux)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class ServerError(RuntimeError):
    pass


class Server:
    """One server under test, started from an argv template.

    ``argv`` may contain ``{port}`` and ``{dir}``; they are filled in with a
    free port and a fresh temporary directory.
    """

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None,
                 ready_timeout: float = 30.0, pick_port: Callable[[], int] | None = None) -> None:
        self.name = name
        self.template = argv
        self.env = env
        self.ready_timeout = ready_timeout
        self.pick_port = pick_port or free_port
        self.port = 0
        self.dir = ""
        self.argv: list[str] = []
        self.proc: subprocess.Popen | None = None
        self._log = None

    # -- life cycle -----------------------------------------------------------
    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self.dir = tempfile.mkdtemp(prefix=f"bench-{self.name}-")
        self.port = self.pick_port()
        self.argv = [a.format(port=self.port, dir=self.dir) for a in self.template]
        self._log = open(os.path.join(self.dir, "server.log"), "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=self.env,
                                     cwd=self.dir, start_new_session=True,
                                     preexec_fn=_die_with_parent)  # noqa: PLW1509 - no threads here
        deadline = time.monotonic() + self.ready_timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerError(f"{self.name} exited with status {self.proc.returncode} "
                                  f"while starting:\n{self.log_tail()}")
            try:
                with resp.Client(self.port, timeout=2.0) as c:
                    if c.call("PING") == b"PONG":
                        return
            except (OSError, resp.RespError, ValueError) as exc:
                last = exc
            time.sleep(0.05)
        self.stop()
        raise ServerError(f"{self.name} did not answer PING within {self.ready_timeout:.0f}s "
                          f"({last!r}):\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM to the server's whole process group (it was started in a
        session of its own), so a server started through a wrapper (``sh -c``,
        a profiler as ``--tidelog-cmd``) stops too; SIGKILL to whatever of
        the group is left after ``timeout``."""
        proc, self.proc = self.proc, None
        if proc is not None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait(timeout)
            deadline = time.monotonic() + timeout
            while _group_alive(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            _signal_group(proc.pid, signal.SIGKILL)
            self.returncode = proc.returncode
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.dir:
            self._last_log = self.log_tail()
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = ""

    # -- measuring ------------------------------------------------------------
    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def precise_cpu_seconds(self) -> float:
        """CPU seconds of the server process to the nanosecond where the
        kernel allows it (see cpu_clock), else cpu_seconds()."""
        if getattr(self, "_clock_pid", None) != self.pid:
            self._clock, self._clock_pid = cpu_clock(self.pid), self.pid
        if self._clock is not None:
            try:
                return self._clock()
            except OSError:
                pass
        return self.cpu_seconds()

    def rss_bytes(self) -> int | None:
        """Resident memory of the server and any process it started."""
        sizes = [rss_bytes(p) for p in [self.pid] + _children(self.pid)]
        return sum(x for x in sizes if x) or None

    def client(self, timeout: float = 60.0) -> resp.Client:
        return resp.Client(self.port, timeout=timeout)

    def log_tail(self, lines: int = 20) -> str:
        if not self.dir:
            return getattr(self, "_last_log", "")
        try:
            with open(os.path.join(self.dir, "server.log"), "rb") as fh:
                text = fh.read()[-8000:].decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


# -- how each server is started ------------------------------------------------

def redis_argv(binary: str = "redis-server") -> list[str]:
    return [binary, "--port", "{port}", "--bind", "127.0.0.1", "--dir", "{dir}",
            "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", ""]


def tidelog_command(repo: Path, override: str | None) -> tuple[list[str], dict[str, str]]:
    """The command that starts Tidelog (without port and dir), and its environment.

    Without an override: the project's virtualenv entry point when it exists,
    else this Python with ``src`` on the path.  An override is split like a
    shell command.
    """
    env = dict(os.environ)
    if override:
        argv = shlex.split(override)
        # The server runs in its temporary directory: anchor a relative program path here.
        if argv and os.sep in argv[0] and not os.path.isabs(argv[0]):
            argv[0] = os.path.abspath(argv[0])
        return argv, env
    script = repo / ".venv" / "bin" / "tidelog-server"
    if script.exists():
        return [str(script)], env
    env["PYTHONPATH"] = os.pathsep.join(
        [str(repo / "src")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return [sys.executable, "-m", "tidelog.server.main"], env


def with_port_and_dir(argv: list[str]) -> list[str]:
    """Append ``--port {port} --dir {dir}`` unless the command already uses them."""
    argv = list(argv)
    if not any("{port}" in a for a in argv):
        argv += ["--port", "{port}"]
    if not any("{dir}" in a for a in argv):
        argv += ["--dir", "{dir}"]
    return argv


def command_version(argv: list[str], env: dict[str, str] | None = None) -> str | None:
    """First line a server prints for ``--version`` (None if that fails)."""
    try:
        out = subprocess.run(argv + ["--version"], check=False, capture_output=True, text=True,
                             timeout=30, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def machine_info() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            m = re.search(r"MemTotal:\s+(\d+) kB", fh.read())
            mem = int(m.group(1)) * 1024 if m else None
    except OSError:
        pass
    bench_version = None
    try:
        out = subprocess.run(["redis-benchmark", "--version"], check=False, capture_output=True,
                             text=True, timeout=10)
        bench_version = out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "cpu_model": model,
        "mem_total_bytes": mem,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "redis_benchmark": bench_version,
        "clk_tck": CLK_TCK,
    }
