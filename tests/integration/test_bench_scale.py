"""The scaling benchmark (bench/scale.py): its command line, the
redis-benchmark command lines it builds, the parsing of redis-benchmark's
output, the medians and the table; and one bounded run of a one-node
Tidelog cluster through ``tidelog-server --cluster-local`` (started and
stopped by the script)."""

from __future__ import annotations

import importlib
import json
import shlex
import shutil
from pathlib import Path

import pytest

from tests.support.processes import server_command

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def scale(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("scale")


def test_defaults_and_sizes(scale):
    args = scale.parse_args([])
    assert args.sizes == [1, 2]
    assert args.kinds == ["redis", "tidelog"]
    assert (args.requests, args.clients, args.pipeline, args.rounds) == (400_000, 16, 16, 5)
    args = scale.parse_args(["--nodes", "2, 1,2", "--only", "tidelog", "-n", "5000"])
    assert args.sizes == [1, 2]
    assert args.kinds == ["tidelog"]
    assert args.requests == 5000
    assert scale.parse_args(["--standalone"]).sizes == [0, 1, 2]   # 0: no cluster mode
    assert scale.label("redis", 0) == "redis-standalone"
    assert scale.label("tidelog", 2) == "tidelog-2"


@pytest.mark.parametrize("argv", [["--nodes", "one"], ["--nodes", "0,2"], ["--rounds", "0"],
                                  ["--nodes", "1,4", "--clients", "3"], ["--only", "valkey"],
                                  ["--drain", "-1"]])
def test_bad_arguments_are_refused(scale, argv, capsys):
    with pytest.raises(SystemExit) as exc:
        scale.parse_args(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_bench_command_lines(scale):
    args = scale.parse_args(["-n", "1000", "-c", "8", "-P", "4"])
    one = scale.bench_argv(args, 7000, 1000, 1)
    assert one == ["redis-benchmark", "-h", "127.0.0.1", "-p", "7000", "-c", "8", "-n", "1000",
                   "-P", "4", "--csv", "XADD", "s:{tag}", "*", "sensor", "17", "temp", "21.5"]
    # redis-benchmark 7.0 takes --cluster with two nodes or more only.
    two = scale.bench_argv(args, 7000, 1000, 2)
    assert two == one[:1] + ["--cluster"] + one[1:]
    threaded = scale.bench_argv(scale.parse_args(["--threads", "2"]), 7000, 10, 2)
    assert threaded[threaded.index("--threads") + 1] == "2"


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_drain_keys_land_on_their_nodes(scale, size, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH.parent / "src"))
    from tidelog.keyslot import key_slot
    from tidelog.server.local_cluster import split_slots
    keys = scale.node_keys(size)
    ranges = split_slots(max(size, 1))
    assert len(keys) == len(ranges)
    for key, (lo, hi) in zip(keys, ranges, strict=True):
        assert lo <= key_slot(key.encode()) <= hi


def test_drain_plan_gives_every_size_the_same_client_processes(scale):
    assert [node for node, _ in scale.drain_plan(1)] == [0, 0]
    assert [node for node, _ in scale.drain_plan(0)] == [0, 0]
    assert [node for node, _ in scale.drain_plan(2)] == [0, 1]
    names = [n for _, part in scale.drain_plan(2) for n in part]
    assert len(names) == len(set(names)) == 4
    assert scale.parse_args(["--drain", "1000"]).drain == 1000


def test_parse_rps_skips_the_cluster_lines(scale):
    out = ('Cluster has 2 master nodes:\n\nMaster 0: abc 127.0.0.1:7000\n'
           '"test","rps","avg_latency_ms","min_latency_ms"\n'
           '"XADD s:{tag} * sensor 17 temp 21.5","123456.79","1.0","0.1"\n')
    assert scale.parse_rps(out) == pytest.approx(123456.79)
    assert scale.parse_rps("Invalid cluster: 1 node(s).\n") is None


def _run(rps, us):
    return {"rps": rps, "server_cpu_us_per_op": us}


def test_summary_medians_and_table(scale):
    runs = {"redis-1": [_run(100_000, 4.0), _run(120_000, 3.0), _run(90_000, 5.0)],
            "tidelog-1": [_run(20_000, 40.0), {"error": "boom"}, _run(30_000, 30.0)],
            "redis-2": [_run(150_000, 5.0), _run(160_000, 5.5), _run(140_000, 4.5)],
            "tidelog-2": [_run(40_000, 40.0), _run(45_000, 35.0), _run(35_000, 45.0)]}
    summary = scale.summarize(runs)
    assert summary["redis-1"]["rps"] == 100_000
    assert summary["tidelog-1"] == {"runs": 2, "rps": 25_000, "rps_all": [20_000, 30_000],
                                    "server_cpu_us_per_op": 35.0,
                                    "server_cpu_us_per_op_all": [40.0, 30.0]}
    table = scale.render(summary, [1, 2], ["redis", "tidelog"]).splitlines()
    assert table[0].startswith("| primaries | Redis ops/s | Redis server CPU µs/op | Tidelog ops/s")
    assert table[2] == "| 1 | 100,000 | 4.00 | 25,000 | 35.00 | 0.250 | 0.114 |"
    assert table[3] == "| 2 | 150,000 | 5.00 | 40,000 | 40.00 | 0.267 | 0.125 |"
    assert table[5] == "Redis: 2 primaries / 1: 1.50x the ops/s, 1.25x the server CPU per op."
    assert table[6] == "Tidelog: 2 primaries / 1: 1.60x the ops/s, 1.14x the server CPU per op."


def test_a_failed_configuration_shows_as_failed(scale):
    summary = scale.summarize({"tidelog-1": [{"error": "x"}], "tidelog-2": [_run(10, 1.0)],
                               "redis-1": [_run(10, 1.0), {**_run(5, 1.0), "problem": "p"}]})
    assert summary["tidelog-1"] == {"runs": 0}
    assert summary["redis-1"]["runs"] == 1
    table = scale.render(summary, [1, 2], ["tidelog"])
    assert "| 1 | failed | failed |" in table
    assert "Tidelog: 2 primaries / 1: -x the ops/s" in table


@pytest.mark.skipif(shutil.which("redis-benchmark") is None, reason="redis-benchmark is needed")
def test_a_bounded_run_of_one_tidelog_node(scale, tmp_path, capsys):
    out = tmp_path / "scale.json"
    command = " ".join(shlex.quote(a) for a in server_command())
    code = scale.main(["--nodes", "1", "--only", "tidelog", "-n", "2000", "-c", "2",
                       "--rounds", "1", "--tidelog-cmd", command, "--json", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    (run,) = report["runs"]["tidelog-1"]
    assert run["requests"] == 2000
    assert run["xadd_calls_per_node"] == [2000]
    assert run["rps"] > 0 and run["server_cpu_s"] >= 0
    assert run["keys_per_node"] == [1]          # one stream: s:{tag}
    assert report["summary"]["tidelog-1"]["runs"] == 1
    assert "| 1 | " in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("redis-benchmark") is None or shutil.which("redis-server") is None,
                    reason="redis-benchmark and redis-server are needed")
def test_a_bounded_run_of_two_redis_nodes_with_cluster(scale, tmp_path):
    out = tmp_path / "scale.json"
    code = scale.main(["--nodes", "2", "--only", "redis", "-n", "2000", "-c", "2",
                       "--rounds", "1", "--standalone", "--drain", "2000", "--json", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    runs = report["runs"]
    (run,) = runs["redis-2"]
    # redis-benchmark --cluster sent each node its share, to one stream each.
    assert sum(run["xadd_calls_per_node"]) == 2000
    assert min(run["xadd_calls_per_node"]) > 0
    assert run["keys_per_node"] == [1, 1]
    (alone,) = runs["redis-standalone"]
    assert alone["xadd_calls_per_node"] == [2000]
    # The drain read every message once, over both nodes, and acknowledged it.
    (drain,) = report["drains"]["redis-2"]
    assert drain["messages"] == drain["consumed"] == drain["acked"] == 2000
    assert drain["pending_at_end"] == 0 and "problem" not in drain
