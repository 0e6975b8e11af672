"""README.md's "Spark pipeline" section, every block run as written (read from the
README at test time), pointed at the test's Tidelog server and a temporary directory:
the install line (as a dry run, which checks that the ``spark`` extra exists and the
package builds), the batch read, the streaming block (its two ``availableNow`` queries
run to the end and the block waits for them itself), the batch write, the
``tidelog-archive`` command and the archive/history block.

Each Python block runs as a script of its own would: in an empty namespace, so a
name it uses without defining (``spark``, ``df``) fails the test.  Its
``local_session()`` joins the test session's SparkSession (the ``spark`` fixture,
``getOrCreate``)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from tests.support.readme import ROOT, blocks

URL = "redis://127.0.0.1:6379/0"


def spark_blocks() -> list:
    found = [b for b in blocks() if b.section == "Spark pipeline"]
    assert [b.lang for b in found] == ["sh", "python", "python", "python", "sh", "python"]
    return found


def sensors(client, minutes: int = 3) -> list[bytes]:
    """Readings every 10 s over the last ``minutes``, a few of them above 30 degrees."""
    now = int(time.time() * 1000)
    pipe = client.pipeline(transaction=False)
    for i in range(minutes * 6):
        for j, sensor in enumerate(("1001", "1002")):
            temperature = 35.0 if i % 5 == 0 else 20.0 + i % 3
            pipe.xadd("sensors", {"sensor-id": sensor, "temperature": temperature},
                      id=f"{now - (minutes * 60 - i * 10) * 1000 + j}-0")
    return pipe.execute()


def pointed(text: str, url: str, tmp_path: Path) -> str:
    return (text.replace(URL, url).replace("/data/archive", str(tmp_path / "archive"))
            .replace('"out/', f'"{tmp_path}/out/'))


def run_block(block, name: str, target, tmp_path: Path) -> dict:
    """Run a Python block as written (pointed at the test's server and directory)
    in a namespace of its own; what it defined."""
    namespace: dict = {"__name__": "__main__"}
    exec(compile(pointed(block.text, target.url, tmp_path), name, "exec"), namespace)
    return namespace


def test_install_line_names_a_real_extra():
    words = shlex.split(spark_blocks()[0].text, comments=True)
    assert words == ["pip", "install", ".[spark]"]
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps",
                           "--no-build-isolation", *words[2:]], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Would install tidelog" in done.stdout
    assert "does not provide the extra" not in done.stdout + done.stderr


def test_python_blocks_and_archive_command(spark, tidelog_target, tmp_path):
    client = tidelog_target.client()
    added = sensors(client)
    read, streaming, write, _, archive_and_history = spark_blocks()[1:]

    namespace = run_block(read, "README batch read", tidelog_target, tmp_path)
    assert namespace["spark"] is spark  # local_session() joined the running session
    assert namespace["df"].count() == len(added)

    run_block(streaming, "README streaming", tidelog_target, tmp_path)
    assert not spark.streams.active  # the block waited for both queries to end
    hot = [fields for _, fields in client.xrange("sensors") if float(fields[b"temperature"]) > 30]
    alerts = [fields for _, fields in client.xrange("alerts")]
    assert len(alerts) == len(hot) > 0
    assert spark.read.parquet(str(tmp_path / "out" / "averages")).count() > 0

    run_block(write, "README batch write", tidelog_target, tmp_path)
    assert [f for _, f in client.xrange("sensors-copy")] == [f for _, f in client.xrange("sensors")]


def test_archive_command_then_history(spark, tidelog_target, tmp_path):
    client = tidelog_target.client()
    old = int(time.time() * 1000) - 10 * 86_400_000          # ten days ago: older than 7d
    for i in range(20):
        client.xadd("sensors", {"sensor-id": "1001", "temperature": 20 + i}, id=f"{old + i}-0")
    recent = sensors(client, minutes=1)
    command = spark_blocks()[4].text.strip()
    assert command.startswith("tidelog-archive ")
    exe = Path(sys.executable).parent / "tidelog-archive"
    done = subprocess.run(["bash", "-c", pointed(command, tidelog_target.url, tmp_path)],
                          env=dict(os.environ, PATH=f"{exe.parent}{os.pathsep}{os.environ['PATH']}"),
                          capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert client.xlen("sensors") == len(recent)               # the 20 old ones moved

    namespace = run_block(spark_blocks()[5], "README archive and history", tidelog_target,
                          tmp_path)
    assert namespace["history"].count() == 0          # the README's month is long past
    everything = namespace["read_history"](spark, tidelog_target.url, "sensors",
                                           str(tmp_path / "archive"))
    assert everything.count() == 20 + len(recent)
