"""README.md, run as a reader would run it: every shell session and Python block,
read from the README at test time, in the README's order, against one server
that the README's own ``make run &`` starts and its ``redis-cli shutdown`` stops.

Shell sessions are checked against the output the README shows (entry IDs
paired up, see ``tests/support/readme.py``).  Python blocks run as scripts of
their own, pointed at the test's port; a few need the server in a given state
first (the dead-letter block needs an entry delivered five times and idle for
minutes: made with ``XCLAIM ... IDLE ... RETRYCOUNT``) or run forever by design
(the consumer loop: stopped once it has acknowledged everything).  The blocks of
"Spark pipeline" run in ``tests/spark/test_readme_spark.py``; the first block
(``make run`` / ``make test``) is the one the tour starts with and the one CI
runs.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.support.readme import (
    Block,
    ShellSession,
    blocks,
    console_steps,
    python_env,
    redirect,
    tool,
)
from tests.support.redis_oracle import free_port

SPARK = "Spark pipeline"
# Its blocks start a cluster of their own: tests/integration/test_cluster_local_readme.py.
LOCAL_CLUSTER = "Cluster on one machine"


def run_python(block: Block, port: int) -> str:
    done = subprocess.run([sys.executable, "-c", redirect(block.text, port)],
                          env=python_env(), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"README line {block.line}:\n{done.stdout}{done.stderr}"
    return done.stdout


def tour(block: Block, session: ShellSession) -> None:
    out = run_python(block, session.port)
    assert out.count("sensor-id") == 4        # the four entries the console part added


def embedded(block: Block, session: ShellSession) -> None:
    assert run_python(block, session.port) == "1\n"


def consumer_loop(block: Block, session: ShellSession) -> None:
    """Alice's loop re-reads her pending entry, acknowledges it, then waits for new
    ones for ever; it is stopped once nothing of hers is pending."""
    with session.client() as c:
        assert c.xpending_range("orders", "shipping", "-", "+", 10, consumername="alice")
    proc = session.processes.popen([sys.executable, "-c", redirect(block.text, session.port)],
                                   env=python_env(), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    with session.client() as c:
        while c.xpending_range("orders", "shipping", "-", "+", 10, consumername="alice"):
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "the consumer loop acknowledged nothing"
            time.sleep(0.05)
    proc.terminate()
    out, _ = proc.communicate(timeout=30)
    assert out.count("b'item'") == 1, out   # handle() printed her one pending entry


def dead_letters(block: Block, session: ShellSession) -> None:
    with session.client() as c:
        cursed = c.xadd("orders", {"item": "cursed", "qty": "1"})
        c.xreadgroup("shipping", "bob", {"orders": ">"}, count=1)
        c.xclaim("orders", "shipping", "bob", 0, [cursed], idle=120_000, retrycount=5)
        run_python(block, session.port)
        assert [f for _, f in c.xrange("orders:dead")] == [
            {"item": "cursed", "qty": "1", "from-id": cursed}]
        pending = c.xpending_range("orders", "shipping", "-", "+", 10)
        assert cursed not in [p["message_id"] for p in pending]


PYTHON_RUNNERS = {          # a line only that block has -> how the test runs it
    'r.xadd("sensors"': tour,
    "EmbeddedServer": embedded,
    "while True:": consumer_loop,
    "xpending_range": dead_letters,
}


def runner_for(block: Block):
    found = [run for marker, run in PYTHON_RUNNERS.items() if marker in block.text]
    assert len(found) == 1, f"README line {block.line}: no test knows how to run this block"
    return found[0]


def outside_spark(kinds: tuple[str, ...]) -> list[Block]:
    return [b for b in blocks() if b.lang in kinds and b.section not in (SPARK, LOCAL_CLUSTER)]


def test_every_block_is_a_known_kind():
    """A block is a shell session (run), Python (run), or plain text: a new kind, or a
    bare ``sh`` block outside the two commands and the Spark section, fails here."""
    found = blocks()
    assert found[0].lang == "sh" and found[0].line == 1
    for block in found[1:]:
        if block.section == SPARK:
            assert block.lang in ("python", "sh"), block
        else:
            assert block.lang in ("console", "python", "text"), block
    for block in outside_spark(("python",)):
        runner_for(block)


def test_the_readme_from_top_to_bottom(processes, tmp_path):
    if tool("redis-cli") is None:
        pytest.skip("redis-cli is not installed (Debian's redis-tools; `make test` "
                    "installs it when run as root)")
    session = ShellSession(processes, free_port(), tmp_path)
    for block in outside_spark(("console", "python")):
        if block.lang == "console":
            session.run(console_steps(block), f"README line {block.line}")
        else:
            runner_for(block)(block, session)
    # The last session stopped the server (its `redis-cli shutdown`): make exits with
    # it, and the snapshot taken on the way out is in DATA.
    (make, out), = session.servers
    assert make.wait(60) == 0, out.read_text(errors="replace")
    assert (tmp_path / "data" / "dump.rdb").exists()
