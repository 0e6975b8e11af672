#!/usr/bin/env python3
"""Run Redis's own Tcl test suite (Debian's redis 7.0.15 source) against a server.

`make compat` runs this.  It fetches Debian's source package of redis once
(scripts/compat-fetch.sh, into .compat/), then runs every unit under
tests/unit and tests/unit/type in the suite's external mode
(``--host 127.0.0.1 --port P``), with one fresh server per unit: started on a
free port with a temporary directory, stopped afterwards whatever happens.
Each unit has a time limit; a unit still running then is killed and reported
as a timeout.

External mode skips by itself what it cannot do (the ``external:skip`` tag);
beyond that the deny list is Redis's own external CI's (``-slow``), changed
with --tags.  Both servers are started as that CI starts redis-server:
``--save ""``, and redis-server with the DEBUG, MODULE and protected CONFIG
commands enabled.

Per unit it prints the tests passed, failed and skipped (counted from the
suite's ``[ok]``, ``[err]``, ``[skip]``/``[ignore]`` and ``[exception]``
lines; an exception stops the unit, so its later tests never run), then the
total on a line of its own: ``N passed, M failed, K skipped``.  The suite's
output for each unit, and the server's log, go to .compat/results/<server>/.

The server: ``--server tidelog`` (the default) launches
``.venv/bin/tidelog-server``, or the command in $TIDELOG_SERVER;
``--server redis`` launches ``redis-server``, or $REDIS_SERVER.  Either
command is split like a shell line, so it may carry arguments.

Exit status: 0 once every unit was tried (failures included; a server that
did not start is reported on its unit's line), 1 when the suite could not
be fetched or the server's command is not found.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".compat"

# As Redis's external CI starts the server it tests (.github/workflows/external.yml);
# Tidelog has no enable-* switches (its DEBUG and CONFIG are always open).
COMMON_OPTIONS = ["--save", ""]
REDIS_OPTIONS = [
    "--enable-debug-command", "yes",
    "--enable-protected-configs", "yes",
    "--enable-module-command", "yes",
]
DEFAULT_TAGS = "-slow"

# 7.0 tests that wait forever under Redis 8's semantics: each waits for a
# message Redis 7.2+ no longer sends, so the unit would stop at its time limit
# and none of its later tests would run.  They are not run (the suite's
# --skiptest) and are counted as failed, each named in failures.txt; the
# difference is in docs/compatibility.md.
WAITS_FOREVER = {
    # Redis 7.2+ (redis/redis#11770): a script's read tracks the keys that
    # read touched, not every key the EVAL names; the test waits for the
    # invalidation of a key only 7.0 tracked.
    "unit/tracking": ["Tracking only occurs for scripts when a command calls a read-only command"],
}

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PORT_TAKEN = re.compile(rb"couldn't open socket: address already in use|Can't find a non busy port")
LINE = re.compile(r"^\[(ok|err|skip|ignore|exception|timeout)\]: (.*)$")


@dataclass
class UnitResult:
    unit: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    exception: str = ""
    timeout: bool = False
    seconds: float = 0.0
    failures: list[str] | None = None

    def note(self) -> str:
        notes = []
        if self.timeout:
            notes.append("TIMEOUT (killed)")
        if self.exception:
            notes.append("exception: " + self.exception[:100])
        return "; ".join(notes)


def fetch_suite() -> Path:
    """The unpacked redis source tree (fetched on the first call only)."""
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "compat-fetch.sh"), str(CACHE)],
        stdout=subprocess.PIPE, text=True, check=False,
    )
    if out.returncode != 0:
        sys.exit("compat: could not fetch Debian's redis source package")
    return Path(out.stdout.strip().splitlines()[-1])


def all_units(tree: Path) -> list[str]:
    tests = tree / "tests"
    units = []
    for folder in ("unit", "unit/type"):
        for path in sorted((tests / folder).glob("*.tcl")):
            units.append(str(path.relative_to(tests).with_suffix("")))
    return units


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(kind: str) -> list[str]:
    if kind == "redis":
        return shlex.split(os.environ.get("REDIS_SERVER", "redis-server"))
    default = str(ROOT / ".venv" / "bin" / "tidelog-server")
    return shlex.split(os.environ.get("TIDELOG_SERVER", default))


def wait_ready(port: int, proc: subprocess.Popen, limit: float) -> bool:
    """True once the server answers PING on ``port``."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group, SIGKILL after 10 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def parse_output(text: str, result: UnitResult) -> None:
    result.failures = []
    for raw in text.splitlines():
        m = LINE.match(ANSI.sub("", raw).strip())
        if not m:
            continue
        status, what = m.groups()
        if status == "ok":
            result.passed += 1
        elif status == "err":
            result.failed += 1
            result.failures.append(what)
        elif status in ("skip", "ignore"):
            result.skipped += 1
        elif status == "exception":
            result.exception = what
        elif status == "timeout":
            result.exception = "timeout: " + what


def run_suite(runner: list[str], tree: Path, limit: int) -> tuple[bytes, bool, int]:
    """The suite's output, whether it ran out of time (and was killed), and
    its exit status."""
    suite = subprocess.Popen(
        runner, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = suite.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(suite.pid, signal.SIGKILL)
        out, _ = suite.communicate()
    finally:
        if suite.poll() is None:
            os.killpg(suite.pid, signal.SIGKILL)
            suite.wait()
    return out, timed_out, suite.returncode


def run_unit(unit: str, tree: Path, kind: str, args: argparse.Namespace,
             results: Path) -> UnitResult:
    result = UnitResult(unit)
    name = unit.replace("/", "_")
    port = free_port()
    workdir = Path(tempfile.mkdtemp(prefix="compat-"))
    server_log = open(results / f"{name}.server.log", "wb")
    cmd = server_command(kind) + [
        "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir),
        *COMMON_OPTIONS, *(REDIS_OPTIONS if kind == "redis" else ()),
    ]
    server = subprocess.Popen(
        cmd, cwd=workdir, stdout=server_log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True,
    )
    start = time.monotonic()
    try:
        if not wait_ready(port, server, 60):
            result.exception = f"the server did not start (see {server_log.name})"
            return result
        tclsh = shutil.which("tclsh8.6") or shutil.which("tclsh") or "tclsh"
        for _attempt in range(3):
            runner = [
                tclsh, "tests/test_helper.tcl", "--host", "127.0.0.1", "--port", str(port),
                "--single", unit, "--clients", "1", "--timeout", str(args.timeout),
                # the suite's own listener (for its test client) takes one of the
                # 32 ports below this (that port plus 10000 free too): below the
                # ephemeral range and away from the default, so runs can go side
                # by side; taken meanwhile, it is tried again elsewhere
                "--baseport", str(random.randrange(12000, 22000)),
            ]
            if args.tags:
                runner += ["--tags", args.tags]
            if kind == "tidelog":
                for test in WAITS_FOREVER.get(unit, ()):
                    runner += ["--skiptest", test]
            out, timed_out, returncode = run_suite(runner, tree, args.timeout)
            if not timed_out and returncode and PORT_TAKEN.search(out):
                continue
            break
        result.timeout = timed_out
        text = out.decode("utf-8", "replace")
        (results / f"{name}.log").write_text(text)
        parse_output(text, result)
        if kind == "tidelog":
            for test in WAITS_FOREVER.get(unit, ()):
                if f"[skip]: {test}" in ANSI.sub("", text):
                    result.skipped -= 1
                    result.failed += 1
                    result.failures = [*(result.failures or ()),
                                       f"{test} (not run: waits forever under Redis 8's semantics)"]
        done = re.search(r"^\[\d+/\d+ done\]: ", ANSI.sub("", text), re.M)
        if returncode and not (done or result.exception or result.timeout):
            last = text.strip().splitlines()[-1:] or ["no output"]
            result.exception = f"exit status {returncode}: {last[0]}"
    finally:
        stop(server)
        server_log.close()
        shutil.rmtree(workdir, ignore_errors=True)
        result.seconds = time.monotonic() - start
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("tidelog", "redis"), default="tidelog")
    parser.add_argument("--timeout", type=int, default=int(os.environ.get("COMPAT_TIMEOUT", 300)),
                        help="seconds per unit before it is killed (default 300)")
    parser.add_argument("--tags", default=os.environ.get("COMPAT_TAGS", DEFAULT_TAGS),
                        help=f"the suite's --tags (default {DEFAULT_TAGS!r})")
    parser.add_argument("units", nargs="*",
                        help="units to run (e.g. unit/type/list); default all")
    args = parser.parse_args()

    exe = server_command(args.server)[0]
    if not shutil.which(exe):
        sys.exit(f"compat: {exe} not found (make venv builds .venv; "
                 "$TIDELOG_SERVER or $REDIS_SERVER name another command)")
    tree = fetch_suite()
    known = all_units(tree)
    units = args.units or known
    for unit in units:
        if unit not in known:
            parser.error(f"no such unit: {unit} (known: {' '.join(known)})")
    results = CACHE / "results" / args.server
    results.mkdir(parents=True, exist_ok=True)

    print(f"compat: {len(units)} units against {args.server} "
          f"({shlex.join(server_command(args.server))}), tags {args.tags!r}, "
          f"{args.timeout} s per unit; logs in {results}", flush=True)
    total = UnitResult("total")
    rows = []
    for unit in units:
        r = run_unit(unit, tree, args.server, args, results)
        rows.append(r)
        total.passed += r.passed
        total.failed += r.failed
        total.skipped += r.skipped
        print(f"{unit:28} {r.passed:5} passed {r.failed:5} failed {r.skipped:5} skipped"
              f" {r.seconds:6.1f}s  {r.note()}", flush=True)

    with open(results / "summary.tsv", "w") as f:
        f.write("unit\tpassed\tfailed\tskipped\tseconds\tnote\n")
        for r in rows:
            f.write(f"{r.unit}\t{r.passed}\t{r.failed}\t{r.skipped}\t{r.seconds:.1f}\t{r.note()}\n")
    with open(results / "failures.txt", "w") as f:
        for r in rows:
            for what in r.failures or ():
                f.write(f"{r.unit}: {what}\n")
            if r.exception:
                f.write(f"{r.unit}: [exception] {r.exception}\n")
            if r.timeout:
                f.write(f"{r.unit}: [timeout] killed after {args.timeout} s\n")
    stopped = [r.unit for r in rows if r.exception or r.timeout]
    if stopped:
        print(f"stopped early (exception or timeout): {' '.join(stopped)}")
    print(f"{total.passed} passed, {total.failed} failed, {total.skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
