"""make test's pytest passes, one per twin of the typed kernels.

The kernels (src/tidelog/kernels.py) have two twins: the compiled one, which
runs whenever the install could build it, and the pure-Python one, which
runs without a C compiler or with TIDELOG_PURE=1.  Both must serve alike, so
``make test`` runs:

* the main pass: the whole suite (``tests/``), with the kernels as installed;
* the pure pass: the integration and differential suites (``PURE_PATHS``,
  default ``tests/integration tests/differential``) with TIDELOG_PURE=1,
  which every server those tests start inherits.  The unit tests of the
  kernels already run on both twins in the main pass (tests/support/twins.py).

The passes share two cores: in the foreground, the main pass without the
Spark tests (``BACKGROUND_PATHS``, default ``tests/spark``); in the
background, the pure pass and then the main pass's Spark tests.  The
integration and differential suites spend most of their time waiting for
sockets and processes, and the Spark tests mostly wait for their JVM, so
the two lines of work take about the same time side by side.  The
foreground prints as it goes; the background passes' output is kept and
printed after it, then one line per pass says which passed or failed.
When the arguments name test paths, the main pass runs them all in the
foreground.  Either failing fails
(exit 1); pytest collecting no test at all fails too, unless pytest
arguments narrowed the pure pass to nothing.  When the kernels are not
compiled, the main pass already runs the pure twins and there is no second
pass (this says so).

Usage: .venv/bin/python scripts/test_twins.py [pytest arguments...]
The arguments go to both passes, but test paths among them narrow the pure
pass to those inside PURE_PATHS (none inside: no pure pass, said so);
PURE_PATHS= with nothing runs no pure pass.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from tidelog import kernels

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PURE_PATHS = "tests/integration tests/differential"
DEFAULT_BACKGROUND_PATHS = "tests/spark"
PURE_SKIPS = ["--ignore-glob=tests/integration/test_cluster_*.py"]
"""Left out of the pure pass: the cluster's processes (minutes of starting
nodes and waiting on the bus) run no kernel code the other integration
tests do not run on the pure twins already."""
NO_TESTS = 5  # pytest's exit code when it collected nothing


def verdict(code: int, narrowed: bool) -> tuple[bool, str]:
    if code == 0:
        return True, "passed"
    if code == NO_TESTS:
        if narrowed:
            return True, "no test selected by the arguments"
        return False, "FAILED: pytest collected no tests"
    return False, f"FAILED (pytest exit {code})"


def split_paths(args: list[str]) -> tuple[list[str], list[str]]:
    """The test paths among pytest's arguments (``tests/unit/test_x.py``,
    ``path::test``: those that exist), and the other arguments."""
    paths = [a for a in args if not a.startswith("-") and (ROOT / a.split("::")[0]).exists()]
    return paths, [a for a in args if a not in paths]


def pure_selection(args: list[str], pure_paths: list[str]) -> tuple[list[str], list[str]]:
    """What the pure pass runs: ``pure_paths``, or, when the arguments name
    test paths, those of them inside ``pure_paths``; and its other arguments."""
    named, others = split_paths(args)
    if not named:
        return pure_paths, others
    roots = [(ROOT / p).resolve() for p in pure_paths]
    inside = [a for a in named
              if any((ROOT / a.split("::")[0]).resolve().is_relative_to(r) for r in roots)]
    return inside, others


def stop(proc: subprocess.Popen[bytes]) -> None:
    """After Ctrl-C: let a pass end as pytest does on an interrupt (its
    fixtures stop their servers); one that did not get the signal (it went
    to this script only) gets it now; killed if still running after a minute."""
    for signalled in (False, True):
        try:
            proc.wait(60 if signalled else 5)
            return
        except subprocess.TimeoutExpired:
            if not signalled:
                proc.send_signal(signal.SIGINT)
    proc.kill()
    proc.wait()


class Background:
    """Passes run one after the other in a thread, each into a log file of
    its own: (label, command, environment, log path, narrowed)."""

    def __init__(self) -> None:
        self.queue: list[tuple[str, list[str], dict[str, str], Path, bool]] = []
        self.codes: list[int | None] = []
        self.current: subprocess.Popen[bytes] | None = None
        self.stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def add(self, label: str, command: list[str], env: dict[str, str], log: Path,
            narrowed: bool) -> None:
        self.queue.append((label, command, env, log, narrowed))

    def _run(self) -> None:
        for _, command, env, log_path, _ in self.queue:
            if self.stopped:
                self.codes.append(None)
                continue
            with open(log_path, "wb") as log:
                self.current = subprocess.Popen(command, cwd=ROOT, env=env,
                                                stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT)
                self.codes.append(self.current.wait())

    def stop(self) -> None:
        self.stopped = True
        if self.current is not None:
            stop(self.current)


def main(args: list[str]) -> int:
    pytest = [sys.executable, "-m", "pytest"]
    state = kernels.status()
    pure_paths, pure_args = pure_selection(
        args, shlex.split(os.environ.get("PURE_PATHS", DEFAULT_PURE_PATHS)))
    pure_label = f"the pure twins' pass (TIDELOG_PURE=1: {' '.join(pure_paths)})"
    named, _ = split_paths(args)
    background_paths = [] if named else [
        p for p in shlex.split(os.environ.get("BACKGROUND_PATHS", DEFAULT_BACKGROUND_PATHS))
        if (ROOT / p).exists()]
    main_label = f"the main pass ({state} kernels)"
    with tempfile.TemporaryDirectory(prefix="tidelog-test-passes-") as tmp:
        background = Background()
        if state != "compiled":
            print(f"make test: the kernels are {state} here, so the main pass runs the pure "
                  "twins: no second pass", flush=True)
        elif not pure_paths:
            print("make test: no pass with the pure twins (PURE_PATHS is empty, or the "
                  "arguments name no test inside it)", flush=True)
        else:
            background.add(pure_label,
                           pytest + ["-p", "no:cacheprovider", f"--basetemp={tmp}/pure",
                                     *PURE_SKIPS, *pure_paths, *pure_args],
                           dict(os.environ, TIDELOG_PURE="1"), Path(tmp) / "pure.log",
                           bool(args))
        if background_paths:
            background.add(f"{main_label}, {' '.join(background_paths)}",
                           pytest + ["-p", "no:cacheprovider", f"--basetemp={tmp}/background",
                                     *background_paths, *args],
                           dict(os.environ), Path(tmp) / "background.log", bool(args))
        foreground = pytest + args + [f"--ignore={p}" for p in background_paths]
        if background.queue:
            print("make test: in the background, one after the other: "
                  + "; ".join(label for label, *_ in background.queue)
                  + " (their output follows the main pass's)", flush=True)
        main_pass: subprocess.Popen[bytes] | None = None
        try:
            background.thread.start()
            main_pass = subprocess.Popen(foreground, cwd=ROOT)
            main_code = main_pass.wait()
            if background.thread.is_alive():
                print("\nmake test: waiting for the background passes ...", flush=True)
            background.thread.join()
        except KeyboardInterrupt:
            background.stop()
            if main_pass is not None:
                stop(main_pass)
            return 130
        results = [(main_label, *verdict(main_code, narrowed=False))]
        for (label, _, _, log_path, narrowed), code in zip(background.queue, background.codes,
                                                            strict=True):
            print(f"\n===== {label} =====", flush=True)
            sys.stdout.buffer.write(log_path.read_bytes())
            sys.stdout.flush()
            if code is not None:
                results.append((label, *verdict(code, narrowed=narrowed)))
    print()
    for label, ok, text in results:
        print(f"make test: {label}: {text}", file=sys.stdout if ok else sys.stderr, flush=True)
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
