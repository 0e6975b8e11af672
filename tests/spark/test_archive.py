"""The archive job (tidelog.spark.archive): old entries to Parquet, then trimmed.

Entries get explicit IDs at fixed times before ``NOW`` (passed as ``now_ms``), so
the cut of ``older_than="7d"`` is ``CUT-0`` whatever the clock says.  What the
archive holds is read from the files its manifest lists, with pyarrow, so the
checks do not depend on the job's own reading code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from tidelog.spark.archive_job import (  # noqa: E402  (after the skip)
    STEPS,
    archive,
    parse_cut,
    parse_duration,
)
from tidelog.spark.manifest import (  # noqa: E402
    MANIFEST,
    ArchiveError,
    escape_key,
    stream_dir,
)

DAY = 86_400_000
NOW = 1_700_000_000_000                 # 2023-11-14T22:13:20Z, before any "*" ID
CUT = NOW - 7 * DAY
KEY = "orders:eu/1"                     # a ':' and a '/' to escape


class Crash(Exception):
    """Stands for the process dying before a step."""


def crash_at(step: str):
    def before(name: str) -> None:
        if name == step:
            raise Crash(name)
    return before


def add(client, key: str, ids: list[str]) -> None:
    for eid in ids:
        client.xadd(key, {"n": eid, "kind": "test"}, id=eid)


def live_ids(client, key: str) -> list[str]:
    return [eid.decode() for eid, _ in client.xrange(key)]


def manifest_of(path: Path, key: str) -> dict:
    with open(os.path.join(stream_dir(path, key), MANIFEST)) as f:
        return json.load(f)


def archived_rows(path: Path, key: str) -> list[dict]:
    """Every row of every file the manifest lists, in file order."""
    directory = stream_dir(path, key)
    try:
        runs = manifest_of(path, key)["runs"]
    except FileNotFoundError:
        return []
    rows = []
    for run in runs:
        for relative in run["files"]:
            rows.extend(pq.read_table(os.path.join(directory, relative)).to_pylist())
    return rows


def archived_ids(path: Path, key: str) -> list[str]:
    return [row["id"] for row in archived_rows(path, key)]


def by_id(ids) -> list[str]:
    return sorted(ids, key=lambda eid: tuple(map(int, eid.split("-"))))


def data_files_on_disk(path: Path, key: str) -> set[str]:
    directory = stream_dir(path, key)
    found = set()
    for root, _dirs, files in os.walk(directory):
        for name in files:
            if name.endswith(".parquet"):
                found.add(os.path.relpath(os.path.join(root, name), directory))
    return found


def test_durations_cuts_and_keys():
    assert parse_duration("30s") == timedelta(seconds=30)
    assert parse_duration("15m") == timedelta(minutes=15)
    assert parse_duration("12h") == timedelta(hours=12)
    assert parse_duration("7d") == timedelta(days=7)
    assert parse_duration("1d12h") == timedelta(hours=36)
    for bad in ("", "7", "d", "7x", "-1d", "1d 2"):
        with pytest.raises(ValueError):
            parse_duration(bad)
    assert parse_cut("1700000000000-5") == (1_700_000_000_000, 5)
    assert parse_cut("1700000000000") == (1_700_000_000_000, 0)
    assert parse_cut("2023-11-14T22:13:20Z") == (1_700_000_000_000, 0)
    assert escape_key("orders:eu/1") == "orders%3Aeu%2F1"
    assert escape_key("_x.y") == "%5Fx%2Ey"
    assert escape_key("a_b-c") == "a_b-c"


def test_the_command_takes_a_stream_or_a_pattern(capsys):
    from tidelog.spark.archive_job import _arguments

    args = _arguments(["--pattern", "logs:*", "--cut", "5-0", "--to", "out"])
    assert args.pattern == "logs:*" and args.stream is None
    args = _arguments(["--stream", "logs", "--older-than", "7d", "--to", "out"])
    assert args.stream == "logs" and args.pattern is None
    for argv in (["--cut", "5-0", "--to", "out"],
                 ["--stream", "a", "--pattern", "b*", "--cut", "5-0", "--to", "out"]):
        with pytest.raises(SystemExit):
            _arguments(argv)
    assert "--pattern" in capsys.readouterr().err


def test_archive_moves_old_entries_and_trims(spark, target, tmp_path):
    client = target.client()
    old = [f"{NOW - 10 * DAY}-0", f"{NOW - 10 * DAY}-1", f"{NOW - 9 * DAY + 5}-0",
           f"{CUT - 1}-7"]
    recent = [f"{CUT}-0", f"{NOW - DAY}-0"]
    add(client, KEY, old + recent)
    lines: list[str] = []

    summary = archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW,
                      num_partitions=2, progress=lines.append)

    assert (summary.rows, summary.first_id, summary.last_id) == (4, old[0], old[-1])
    assert summary.files >= 3 and summary.bytes > 0 and summary.trimmed == 4
    assert "archived 4 entries" in str(summary) and "rows/s" in str(summary)
    assert any(line.startswith("read: 4 entries") for line in lines)
    assert any(line.startswith("trim: ") for line in lines)
    assert live_ids(client, KEY) == recent
    rows = archived_rows(tmp_path, KEY)
    assert by_id(r["id"] for r in rows) == old
    assert set(rows[0]) == {"stream", "id", "ms", "seq", "ts", "fields"}
    first = next(r for r in rows if r["id"] == old[1])
    assert (first["stream"], first["ms"], first["seq"]) == (KEY, NOW - 10 * DAY, 1)
    assert dict(first["fields"]) == {"n": old[1], "kind": "test"}
    assert first["ts"].timestamp() * 1000 == NOW - 10 * DAY
    run, = manifest_of(tmp_path, KEY)["runs"]
    assert (run["first_id"], run["last_id"], run["rows"], run["trimmed"]) == \
        (old[0], old[-1], 4, True)
    days = {f.split("/")[0] for f in run["files"]}
    assert days == {"day=2023-11-04", "day=2023-11-05", "day=2023-11-07"}
    assert data_files_on_disk(tmp_path, KEY) == set(run["files"])
    assert os.path.basename(stream_dir(tmp_path, KEY)) == "orders%3Aeu%2F1"

    # the same run again finds nothing to do and changes nothing
    before = manifest_of(tmp_path, KEY)
    again = archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, progress=None)
    assert (again.rows, again.trimmed, again.run_id) == (0, 0, None)
    assert manifest_of(tmp_path, KEY) == before
    assert live_ids(client, KEY) == recent

    # a later run takes what has become old since, into a second run
    later = archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW + 6 * DAY,
                    progress=None)
    assert (later.rows, later.first_id, later.last_id) == (1, recent[0], recent[0])
    assert by_id(archived_ids(tmp_path, KEY)) == old + recent[:1]
    assert live_ids(client, KEY) == recent[1:]
    assert len(manifest_of(tmp_path, KEY)["runs"]) == 2


def test_nothing_to_archive(spark, target, tmp_path):
    client = target.client()
    add(client, "fresh", [f"{NOW - DAY}-0"])
    summary = archive(spark, target.url, "fresh", timedelta(days=7), tmp_path, now_ms=NOW,
                      progress=None)
    assert summary.rows == 0 and "nothing to archive" in str(summary)
    assert live_ids(client, "fresh") == [f"{NOW - DAY}-0"]
    summary = archive(spark, target.url, "missing", "7d", tmp_path, now_ms=NOW,
                      progress=None)
    assert summary.rows == 0


@pytest.mark.parametrize("step", STEPS)
def test_crash_at_each_step_then_rerun(spark, target, tmp_path, step):
    client = target.client()
    first = [f"{NOW - 20 * DAY}-0", f"{NOW - 20 * DAY}-1", f"{NOW - 12 * DAY}-0"]
    add(client, KEY, first)

    with pytest.raises(Crash):
        archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, num_partitions=1,
                progress=None, before_step=crash_at(step))

    # what the crash left: the entries are still in the stream, or committed
    committed = step in ("trim", "mark_trimmed")
    assert by_id(archived_ids(tmp_path, KEY)) == (first if committed else [])
    assert live_ids(client, KEY) == ([] if step == "mark_trimmed" else first)

    # the world goes on: an old entry with an explicit ID and new ones
    late_old = [f"{CUT - 1}-0"]
    young = [f"{CUT}-0", f"{NOW - DAY}-0"]
    add(client, KEY, late_old + young)
    young.append(client.xadd(KEY, {"n": "auto"}).decode())

    summary = archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, num_partitions=1,
                      progress=None)

    archived = archived_ids(tmp_path, KEY)
    assert by_id(archived) == first + late_old            # each exactly once
    assert len(archived) == len(set(archived))
    assert live_ids(client, KEY) == young
    assert summary.rows == (1 if committed else 4)
    runs = manifest_of(tmp_path, KEY)["runs"]
    assert all(run["trimmed"] for run in runs)
    listed = {f for run in runs for f in run["files"]}
    assert data_files_on_disk(tmp_path, KEY) == listed    # no orphan, no staging left
    assert not [n for n in os.listdir(stream_dir(tmp_path, KEY)) if n.startswith("_staging")]


def test_verify_refuses_to_trim_when_staged_files_lose_rows(spark, target, tmp_path):
    client = target.client()
    ids = [f"{NOW - 10 * DAY}-0", f"{NOW - 9 * DAY}-0", f"{NOW - 8 * DAY}-0"]
    add(client, KEY, ids)

    def lose_a_file(name: str) -> None:
        if name == "verify":
            directory = stream_dir(tmp_path, KEY)
            staged = sorted(f for f in Path(directory).rglob("*.parquet")
                            if "_staging-" in str(f))
            assert len(staged) >= 2
            staged[0].unlink()

    with pytest.raises(ArchiveError, match="verify"):
        archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, progress=None,
                before_step=lose_a_file)
    assert live_ids(client, KEY) == ids                   # nothing trimmed
    assert archived_ids(tmp_path, KEY) == []
    assert data_files_on_disk(tmp_path, KEY) == set()      # staging removed


def test_verify_refuses_to_trim_when_an_entry_vanishes_mid_run(spark, target, tmp_path):
    client = target.client()
    ids = [f"{NOW - 10 * DAY}-0", f"{NOW - 9 * DAY}-0", f"{NOW - 8 * DAY}-0"]
    add(client, KEY, ids)

    def delete_one(name: str) -> None:
        if name == "write":                 # after the count, before the write
            client.xdel(KEY, ids[1])

    with pytest.raises(ArchiveError, match="2 entries"):
        archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, progress=None,
                before_step=delete_one)
    assert live_ids(client, KEY) == [ids[0], ids[2]]
    assert archived_ids(tmp_path, KEY) == []


def test_cli_end_to_end(tidelog_target, tmp_path):
    client = tidelog_target.client()
    old = ["1600000000000-0", "1600000000000-1", "1600086400000-0"]
    add(client, "clicks", old)
    young = client.xadd("clicks", {"n": "now"}).decode()
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    script = Path(sys.executable).with_name("tidelog-archive")     # the console script
    command = [str(script)] if script.exists() else \
        [sys.executable, "-m", "tidelog.spark.archive_job"]

    done = subprocess.run(
        command + ["--url", tidelog_target.url, "--stream", "clicks", "--older-than", "1d",
                   "--to", str(tmp_path), "--partitions", "2", "--master", "local[1]",
                   "--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 "
                             "-XX:+UseSerialGC"],
        env=env, capture_output=True, text=True, timeout=240)

    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for step in ("plan:", "read: 3 entries", "write:", "verify:", "move:", "commit:",
                 "trim:"):
        assert step in out, out
    assert "archived 3 entries of 'clicks', 1600000000000-0 .. 1600086400000-0" in out
    assert "rows/s" in out
    assert by_id(archived_ids(tmp_path, "clicks")) == old
    assert live_ids(client, "clicks") == [young]

    bad = subprocess.run(
        command + ["--stream", "clicks", "--older-than", "soon", "--to", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a duration" in bad.stderr
