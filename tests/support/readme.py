"""README.md's code blocks, read from the README itself and run as a reader would.

``blocks()`` cuts the README into its fenced blocks.  A ``console`` block is a
shell session: ``$ command`` lines, each followed by the output the README shows
for it (``console_steps``).  ``ShellSession`` runs such steps with bash against
a server the test chose, and ``compare`` checks the output:

* Entry IDs made from the clock (``1764047312811-0``: thirteen digits and a
  sequence) differ from run to run, so each one the README shows stands for the
  ID at the same place of the real output: the first time it is seen that pairs
  the two, and from then on the README's ID must match the same real ID,
  wherever it appears, and is replaced by it in later commands (``XACK orders
  shipping 1764047312811-0`` acknowledges the entry the README's XREADGROUP got).
  Everything else must match to the byte.
* A command shown without output must succeed without an error reply.
* ``cmd &`` runs in the background, as in a terminal.  A background
  ``make run`` is the server (waited for until it answers PING, stopped at the
  end); any other background command is a client that blocks (waited for until
  the server counts it blocked) and whose output is read after the next
  command, where the README shows it.

``redis-cli`` and ``redis-benchmark`` reach the test's server through two small
wrapper scripts put first on PATH (``-p <port>``, and ``--no-raw`` so that
redis-cli prints as it does in a terminal); ``make run`` gets the port and data
directory through the environment (the Makefile's ``PORT ?=`` and ``DATA ?=``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from tests.support.processes import ProcessGroup

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CLOCK_ID = re.compile(r"\b\d{13}-\d+\b")


@dataclass(frozen=True)
class Block:
    lang: str      # the fence's info string: console, sh, python, text...
    text: str      # the lines between the fences
    line: int      # the line number of the opening fence, 1-based
    section: str   # the title of the ``##`` section it is in


def blocks(path: Path = README) -> list[Block]:
    found, section, opened, lang, lines = [], "", 0, "", []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if opened:
            if line.startswith("```"):
                found.append(Block(lang, "\n".join(lines) + "\n", opened, section))
                opened = 0
            else:
                lines.append(line)
        elif line.startswith("```"):
            opened, lang, lines = number, line[3:].strip(), []
        elif line.startswith("## "):
            section = line[3:].strip()
    return found


@dataclass
class Step:
    command: str                                   # without the ``$ `` and without ``&``
    background: bool
    expected: list[str] = field(default_factory=list)


def console_steps(block: Block) -> list[Step]:
    steps: list[Step] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            command = line[2:]
            code = command.split(" #", 1)[0].rstrip()
            background = code.endswith("&")
            if background:
                command = code[:-1].rstrip()
            steps.append(Step(command, background))
        else:
            assert steps, f"README line {block.line}: output before the first command"
            steps[-1].expected.append(line)
    return steps


class IdMap:
    """The README's clock IDs and the real ones they stand for, one to one."""

    def __init__(self) -> None:
        self.real: dict[str, str] = {}

    def substitute(self, command: str) -> str:
        return CLOCK_ID.sub(lambda m: self.real.get(m.group(), m.group()), command)

    def match_line(self, shown: str, got: str) -> bool:
        shown_parts, got_parts = CLOCK_ID.split(shown), CLOCK_ID.split(got)
        shown_ids, got_ids = CLOCK_ID.findall(shown), CLOCK_ID.findall(got)
        if shown_parts != got_parts or len(shown_ids) != len(got_ids):
            return False
        for readme_id, real_id in zip(shown_ids, got_ids):
            known = self.real.get(readme_id)
            if known is None and real_id in self.real.values():
                return False          # that real ID already stands for another README ID
            if known is not None and known != real_id:
                return False
            self.real[readme_id] = real_id
        return True


def compare(ids: IdMap, expected: list[str], got: str, where: str) -> None:
    lines = got.splitlines()
    if not expected:
        assert "(error)" not in got and "ERR" not in got, f"{where}: an error:\n{got}"
        return
    assert len(lines) == len(expected) and all(
        ids.match_line(shown, real) for shown, real in zip(expected, lines)), (
        f"{where}: the README shows\n" + "\n".join(expected) + "\nbut it printed\n" + got)


def tool(name: str) -> str | None:
    return shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)


class ShellSession:
    """Runs a README's ``$`` lines with bash against the server on ``port``."""

    def __init__(self, processes: ProcessGroup, port: int, workdir: Path,
                 record: list[tuple[str, str]] | None = None) -> None:
        self.processes = processes
        self.port = port
        self.ids = IdMap()
        self.waiting: list[tuple[subprocess.Popen, Path]] = []   # blocked clients
        self.servers: list[tuple[subprocess.Popen, Path]] = []   # background `make run`s
        bin_dir = workdir / "readme-bin"
        bin_dir.mkdir(exist_ok=True)
        for name, extra in (("redis-cli", "--no-raw"), ("redis-benchmark", "")):
            real = tool(name)
            if real is None:
                continue
            script = bin_dir / name
            script.write_text(f'#!/bin/sh\nexec {real} -p {port} {extra} "$@"\n')
            script.chmod(0o755)
        self.env = dict(os.environ, PORT=str(port), DATA=str(workdir / "data"),
                        PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}"
                             f"{os.pathsep}{os.environ.get('PATH', '')}")
        self.workdir = workdir
        self.record = record    # set: collect (command, output) instead of comparing

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=10, decode_responses=True)

    def run(self, steps: list[Step], where: str) -> None:
        for step in steps:
            command = self.ids.substitute(step.command)
            if step.background:
                self._start(command)
                assert not step.expected, f"{where}: output shown for a background command"
                continue
            done = subprocess.run(["bash", "-c", command], cwd=ROOT, env=self.env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=120)
            out = done.stdout + self._collect()
            assert done.returncode == 0, f"{where}: `{command}` exited {done.returncode}\n" \
                                         f"{done.stdout}{done.stderr}"
            if step.command.startswith("redis-benchmark"):
                assert "requests per second" in out, f"{where}: nothing measured:\n{out}"
            if self.record is not None:
                self.record.append((step.command, out))
            else:
                compare(self.ids, step.expected, out, f"{where}: `{step.command}`")

    def _start(self, command: str) -> None:
        out = self.workdir / f"background-{len(self.waiting)}-{time.monotonic_ns()}.out"
        with open(out, "wb") as fh:
            proc = self.processes.popen(["bash", "-c", f"exec {command}"], cwd=ROOT,
                                        env=self.env, stdin=subprocess.DEVNULL, stdout=fh,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        if command.startswith("make run"):
            self.servers.append((proc, out))
            self._wait(lambda c: c.ping(), proc, out)
            return
        self.waiting.append((proc, out))
        count = len(self.waiting)
        self._wait(lambda c: c.info("clients")["blocked_clients"] >= count, proc, out)

    def _wait(self, ready, proc: subprocess.Popen, out: Path) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"exited early:\n{out.read_text(errors='replace')}"
            try:
                with self.client() as c:
                    if ready(c):
                        return
            except redis.ConnectionError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"not ready after 60 s:\n{out.read_text(errors='replace')}")

    def _collect(self) -> str:
        """The output of the blocked clients the last command woke, in start order."""
        text = ""
        for proc, out in self.waiting:
            proc.wait(30)
            text += out.read_text(errors="replace")
        self.waiting.clear()
        return text


def redirect(code: str, port: int) -> str:
    """A Python block pointed at the test's server instead of 6379."""
    return code.replace("redis.Redis()", f"redis.Redis(port={port})").replace(
        "6379", str(port))


def python_env() -> dict[str, str]:
    src = str(ROOT / "src")
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH", "")) if p))
