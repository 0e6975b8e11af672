"""``tidelog-server --cluster-local N``: the launcher with real processes.

Each test starts the launcher (tests/support/local_cluster.py) in a session of its own through the
``processes`` fixture, so its finaliser kills the launcher's whole process
group (the launcher and its nodes) whatever happens.  The launcher prints a
table once the cluster is ok (port, bus, role, slots, pid, core, dir); the
tests read the nodes' pids from it.  Pure parts (the slot split, the
replica assignment, the options): tests/unit/test_local_cluster.py.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster

from tests.support.cluster import free_range, require_cluster_mode
from tests.support.local_cluster import (
    Launcher,
    check,
    cli,
    client,
    gone,
    node_ids,
    wait_ok,
)
from tests.support.processes import server_command, server_env


@pytest.fixture
def launch(processes, tmp_path):
    require_cluster_mode()

    def start(count: int, *extra: str, base: int | None = None, name: str = "launcher",
              workdir: Path | None = None) -> Launcher:
        return Launcher(processes, workdir or tmp_path, count,
                        base if base is not None else free_range(count), *extra, name=name)
    return start


def test_two_nodes_one_per_core_redis_cli_and_redis_py(launch):
    launcher = launch(2)
    table = launcher.ready()
    ports = launcher.ports()
    assert sorted(table) == ports
    assert [table[p]["slots"] for p in ports] == ["0-8191", "8192-16383"]
    for i, port in enumerate(ports):
        row = table[port]
        assert row["role"] == "master" and row["bus"] == str(port + 10000)
        assert (launcher.out_path.parent / row["dir"]).resolve() == launcher.dir / str(port)
        assert (launcher.dir / str(port) / "nodes.conf").exists()
        assert (launcher.dir / str(port) / "server.log").exists()
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) > 1:  # node i on usable core i mod ncpu (the table shows the pinning)
            assert row["core"] == str(cores[i % len(cores)])
            assert os.sched_getaffinity(int(row["pid"])) == {cores[i % len(cores)]}
    check(ports[0])
    # redis-cli -c follows MOVED between the two nodes
    for key in ("a", "b", "c", "d", "e"):
        assert cli("-c", "-p", str(ports[0]), "SET", key, key * 3).stdout.strip() == "OK"
    for key in ("a", "b", "c", "d", "e"):
        assert cli("-c", "-p", str(ports[1]), "GET", key).stdout.strip() == key * 3
    assert {client(p).dbsize() for p in ports} != {0}
    cluster = RedisCluster(host="127.0.0.1", port=ports[1], decode_responses=True)
    try:
        for i in range(200):
            cluster.xadd(f"s{i}", {"n": str(i)}, id="1-1")
        assert [cluster.xlen(f"s{i}") for i in range(200)] == [1] * 200
        assert sorted(n.port for n in cluster.get_nodes()) == ports
    finally:
        cluster.close()
    pids = [int(table[p]["pid"]) for p in ports]
    assert launcher.terminate() == 0
    assert all(gone(pid) for pid in pids)
    assert ">>> All nodes stopped" in launcher.output


def test_a_node_killed_is_started_again_with_its_node_id(launch):
    launcher = launch(3)
    table = launcher.ready()
    ports = launcher.ports()
    ids = node_ids(ports)
    assert [table[p]["slots"] for p in ports] == ["0-5460", "5461-10922", "10923-16383"]
    check(ports[0])
    before = len(launcher.output)
    victim = int(table[ports[1]]["pid"])
    os.kill(victim, signal.SIGKILL)
    out = launcher.wait_for(f"node {ports[1]} started again", after=before)
    assert f"node {ports[1]} exited with code -9" in out[before:]
    wait_ok(ports, 3)
    assert node_ids(ports) == ids
    check(ports[0])
    new_pid = int(re.findall(rf"node {ports[1]} started again \(pid (\d+)\)", out)[-1])
    assert new_pid != victim and not gone(new_pid)
    assert launcher.terminate() == 0
    assert gone(new_pid)


def test_sigterm_stops_every_node_and_a_second_start_finds_the_cluster(launch):
    launcher = launch(3, "--appendonly", "yes")
    table = launcher.ready()
    ports = launcher.ports()
    ids = node_ids(ports)
    cluster = RedisCluster(host="127.0.0.1", port=ports[0], decode_responses=True)
    try:
        for i in range(60):
            cluster.set(f"key:{i}", str(i))
    finally:
        cluster.close()
    pids = [int(table[p]["pid"]) for p in ports]
    assert launcher.terminate() == 0
    assert all(gone(pid) for pid in pids)
    for port in ports:
        assert (launcher.dir / str(port) / "appendonlydir").is_dir()

    again = launch(3, "--appendonly", "yes", base=launcher.base, name="again")
    again.ready()
    assert "not creating one" in again.output
    assert ">>> Creating" not in again.output
    assert node_ids(ports) == ids
    check(ports[0])
    cluster = RedisCluster(host="127.0.0.1", port=ports[2], decode_responses=True)
    try:
        assert [cluster.get(f"key:{i}") for i in range(60)] == [str(i) for i in range(60)]
    finally:
        cluster.close()
    assert again.terminate() == 0


@pytest.mark.parametrize("busy", ["port", "bus port"])
def test_a_port_in_use_is_an_error_and_nothing_runs(launch, busy):
    base = free_range(3)
    taken = base + 1 + (10000 if busy == "bus port" else 0)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", taken))
        sock.listen()
        launcher = launch(3, base=base)
        assert launcher.proc.wait(60) == 1
    out = launcher.output
    assert f"error: {busy} {taken} (node 2 of 3, ports {base}-{base + 2}" in out
    assert "is not free on 127.0.0.1" in out
    for port in (base, base + 2):  # nothing was started
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0
    assert not launcher.dir.exists()


def test_bad_options_exit_1_with_the_usage(launch, tmp_path):
    done = subprocess.run([*server_command(), "--cluster-local", "3", "--cluster-port", "9"],
                          env=server_env(), capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert "error: --cluster-port cannot be given with --cluster-local" in done.stderr
    assert "Usage: tidelog-server --cluster-local N" in done.stderr
    assert not (tmp_path / "data").exists()


@pytest.mark.long
def test_six_nodes_with_a_replica_each(launch):
    launcher = launch(6, "--cluster-replicas", "1")
    table = launcher.ready()
    ports = launcher.ports()
    roles = [table[p]["role"] for p in ports]
    assert roles == ["master"] * 3 + ["replica"] * 3
    # redis-cli's pairing on one host: 4th -> 3rd master, 5th -> 1st, 6th -> 2nd
    assert [table[p]["slots"] for p in ports[3:]] == [f"(of {ports[2]})", f"(of {ports[0]})",
                                                      f"(of {ports[1]})"]
    done = check(ports[0])
    assert done.stdout.count("| 1 slaves.") == 3  # redis-cli 7.0's words
    assert launcher.terminate() == 0


@pytest.mark.long
def test_nodes_started_without_creation_join_with_add_node_and_take_slots(launch, tmp_path):
    first = launch(3)
    first.ready()
    (tmp_path / "more").mkdir()
    more = launch(1, "--cluster-create", "no", name="more", workdir=tmp_path / "more")
    table = more.ready()
    new_port = more.base
    assert "without creating a cluster" in more.output
    assert table[new_port]["role"] == "master" and table[new_port]["slots"] == "-"
    assert client(new_port).execute_command("CLUSTER", "INFO").count("cluster_known_nodes:1")
    done = cli("--cluster", "add-node", f"127.0.0.1:{new_port}", f"127.0.0.1:{first.base}")
    assert done.returncode == 0, done.stdout + done.stderr
    wait_ok([*first.ports(), new_port], 4)
    done = cli("--cluster", "rebalance", f"127.0.0.1:{first.base}",
               "--cluster-use-empty-masters", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    wait_ok([*first.ports(), new_port], 4)
    check(first.base)
    myself = next(line for line in client(new_port).execute_command("CLUSTER", "NODES")
                  .splitlines() if "myself" in line)
    assert len(myself.split()) > 8, myself  # it serves slots now
    assert more.terminate() == 0
    assert first.terminate() == 0


@pytest.mark.parametrize("to_group", [True, False])
def test_ctrl_c_stops_the_nodes_and_exits_0(launch, to_group):
    # A terminal's Ctrl-C sends SIGINT to the whole foreground group (the
    # launcher and its nodes at once); a plain `kill -INT` to the launcher alone.
    launcher = launch(1)
    table = launcher.ready()
    assert table[launcher.base]["slots"] == "0-16383"
    pid = int(table[launcher.base]["pid"])
    if to_group:
        os.killpg(launcher.proc.pid, signal.SIGINT)
    else:
        launcher.proc.send_signal(signal.SIGINT)
    assert launcher.proc.wait(90) == 0, launcher.output
    assert gone(pid)
    assert ">>> All nodes stopped" in launcher.output
    assert "exited with code" not in launcher.output  # nothing was started again


def test_nodes_with_a_password(launch):
    launcher = launch(1, "--requirepass", "s3cret")
    table = launcher.ready()
    assert table[launcher.base]["role"] == "master"
    with pytest.raises(redis.AuthenticationError):
        client(launcher.base).ping()
    authed = redis.Redis(port=launcher.base, password="s3cret", decode_responses=True)
    assert "cluster_state:ok" in authed.execute_command("CLUSTER", "INFO")
    assert launcher.terminate() == 0


def test_more_nodes_over_a_formed_cluster_are_left_empty(launch):
    launcher = launch(2)
    launcher.ready()
    ids = node_ids(launcher.ports())
    assert launcher.terminate() == 0
    more = launch(3, base=launcher.base, name="more")
    table = more.ready()
    assert ">>> Creating" not in more.output
    assert (f"warning: the nodes on ports {launcher.base + 2} are empty while the others are "
            "in a cluster: not creating one") in more.output
    assert ">>> cluster_state:ok on 2 nodes" in more.output
    assert node_ids(launcher.ports()) == ids
    assert table[launcher.base + 2]["slots"] == "-"
    assert more.terminate() == 0
