"""The launcher's pure parts (``tidelog.server.local_cluster``): the slot
split and the replica assignment of ``redis-cli --cluster create``, and the
command line (what is the launcher's, what goes to every node).  The
processes themselves: tests/integration/test_cluster_local.py."""

from __future__ import annotations

import os

import pytest

from tidelog.server.local_cluster import (
    LauncherError,
    assign_replicas,
    masters_count,
    parse_args,
    split_slots,
    wants_launcher,
)


def test_three_masters_get_redis_clis_ranges():
    # redis-cli --cluster create's "Master[i] -> Slots ..." lines for three masters
    assert split_slots(3) == [(0, 5460), (5461, 10922), (10923, 16383)]


@pytest.mark.parametrize(("masters", "expected"), [
    (1, [(0, 16383)]),
    (2, [(0, 8191), (8192, 16383)]),
    (5, [(0, 3276), (3277, 6553), (6554, 9829), (9830, 13106), (13107, 16383)]),
    (7, [(0, 2340), (2341, 4680), (4681, 7021), (7022, 9361), (9362, 11702), (11703, 14042),
         (14043, 16383)]),
    (11, [(0, 1488), (1489, 2978), (2979, 4467), (4468, 5957), (5958, 7446), (7447, 8936),
          (8937, 10425), (10426, 11915), (11916, 13404), (13405, 14894), (14895, 16383)]),
])
def test_the_split_follows_redis_clis_single_precision_cursor(masters, expected):
    # Values of redis-cli's arithmetic (a float cursor, lround) for these counts.
    assert split_slots(masters) == expected


def test_a_hundred_masters_round_as_redis_cli_does():
    ranges = split_slots(100)
    assert ranges[:3] == [(0, 163), (164, 327), (328, 491)]
    assert ranges[49:51] == [(8028, 8191), (8192, 8355)]
    assert ranges[-2:] == [(16056, 16219), (16220, 16383)]


@pytest.mark.parametrize("masters", [1, 2, 3, 4, 6, 8, 9, 13, 64, 127, 500, 1000])
def test_the_ranges_cover_every_slot_once_evenly(masters):
    ranges = split_slots(masters)
    assert len(ranges) == masters
    assert ranges[0][0] == 0 and ranges[-1][1] == 16383
    for (_, last), (first, _) in zip(ranges, ranges[1:]):
        assert first == last + 1
    sizes = [last - first + 1 for first, last in ranges]
    assert max(sizes) - min(sizes) <= 2


def test_no_master_is_an_error():
    with pytest.raises(ValueError):
        split_slots(0)
    with pytest.raises(ValueError):
        assign_replicas(2, 2)


def test_six_nodes_one_replica_each_as_redis_cli_pairs_them():
    # redis-cli on one host: "Adding replica :7004 to :7000", ":7005 to :7001", ":7003 to :7002"
    assert assign_replicas(6, 1) == [None, None, None, 2, 0, 1]


def test_no_replicas_makes_every_node_a_master():
    assert assign_replicas(4, 0) == [None] * 4
    assert masters_count(4, 0) == 4


def test_nodes_left_over_become_extra_replicas_master_by_master():
    # 7 nodes, 1 replica: 3 masters, 3 replicas, and the 7th an extra replica of the first
    assert assign_replicas(7, 1) == [None, None, None, 0, 0, 1, 2]
    # 9 nodes, 2 replicas: 3 masters with 2 each
    assert assign_replicas(9, 2) == [None, None, None, 2, 0, 0, 1, 1, 2]
    # 11 nodes, 2 replicas: two left over, one more for the first two masters
    got = assign_replicas(11, 2)
    assert [got.count(m) for m in range(3)] == [3, 3, 2]


def test_every_non_master_replicates_a_master():
    for nodes in range(1, 20):
        for replicas in range(0, nodes):
            if masters_count(nodes, replicas) < 1:
                continue
            got = assign_replicas(nodes, replicas)
            masters = masters_count(nodes, replicas)
            assert got[:masters] == [None] * masters
            assert all(m is None or 0 <= m < masters for m in got)
            assert min(got.count(m) for m in range(masters)) >= replicas
            # redis-cli hands out one extra replica per master, once: what is
            # left after that stays an empty master
            left = nodes - masters * (replicas + 1)
            assert got[masters:].count(None) == left - min(left, masters)


def test_the_launchers_options_and_the_nodes():
    options = parse_args(["--cluster-local", "3", "--port", "7000", "--dir", "cl",
                          "--appendonly", "yes", "--cluster-node-timeout", "5000",
                          "--cluster-replicas", "0", "--save", ""])
    assert (options.nodes, options.port, options.replicas, options.create) == (3, 7000, 0, True)
    assert options.dir == "cl"
    assert options.node_args == ["--appendonly", "yes", "--cluster-node-timeout", "5000",
                                 "--save", ""]
    assert options.host == "127.0.0.1"


def test_defaults_one_argument_options_and_a_config_file(tmp_path):
    conf = tmp_path / "t.conf"
    options = parse_args([str(conf), "--cluster-local 2", "--cluster-create", "NO",
                          "--bind", "0.0.0.0"])
    assert (options.nodes, options.port, options.dir, options.create) == (2, 6379, "data", False)
    assert options.config_file == os.path.abspath(conf)
    assert options.node_args == ["--bind", "0.0.0.0"]
    assert options.host == "127.0.0.1"  # a wildcard bind: reached on loopback
    assert parse_args(["--cluster-local", "1", "--bind", "10.1.2.3 127.0.0.1"]).host == "10.1.2.3"


@pytest.mark.parametrize(("argv", "text"), [
    (["--port", "7000"], "--cluster-local N is missing"),
    (["--cluster-local", "0"], "--cluster-local needs a number from 1 to 1000, got '0'"),
    (["--cluster-local", "x"], "--cluster-local needs a number from 1 to 1000, got 'x'"),
    (["--cluster-local", "3", "--port", "55535"], "--port needs a number from 1 to 55533"),
    (["--cluster-local", "3", "--cluster-replicas", "3"], "--cluster-replicas needs a number"),
    (["--cluster-local", "3", "--cluster-create", "maybe"], "--cluster-create takes yes or no"),
    (["--cluster-local", "3", "--cluster-port", "9000"], "--cluster-port cannot be given"),
    (["--cluster-local", "3", "--port"], "--port takes one value"),
    (["t.conf", "stray", "--cluster-local", "3"], "unexpected argument 'stray'"),
])
def test_bad_launcher_options_say_what_is_wrong(argv, text):
    with pytest.raises(LauncherError) as exc:
        parse_args(argv)
    assert text in str(exc.value)


def test_only_cluster_local_asks_for_the_launcher():
    assert wants_launcher(["--cluster-local", "3"])
    assert wants_launcher(["--port", "7000", "--CLUSTER-LOCAL", "2"])
    assert wants_launcher(["--cluster-local 2"])
    assert not wants_launcher(["--port", "7000", "--cluster-enabled", "yes"])
    assert not wants_launcher(["redis.conf"])


def test_requirepass_goes_to_the_nodes_and_the_launcher_authenticates_with_it():
    options = parse_args(["--cluster-local", "2", "--requirepass", "s3cret"])
    assert options.node_args == ["--requirepass", "s3cret"]
    assert options.password == "s3cret"
    assert parse_args(["--cluster-local", "2"]).password is None
