"""The cluster shell's file and option handling, without sockets: nodes.conf's
lock and its atomic rewrite, the bus port, the settings the options give."""

from __future__ import annotations

import fcntl
import os

import pytest

from tidelog.config import Config
from tidelog.server.cluster_bus import bus_port, refresh_settings, settings_values
from tidelog.server.cluster_config import ConfigLockError, config_path, lock_config, write_config


def locked_elsewhere(path) -> bool:
    """Whether another open file description can not take the lock."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def test_lock_creates_and_holds(tmp_path):
    path = tmp_path / "nodes.conf"
    fd = lock_config(str(path))
    try:
        assert path.exists()
        assert locked_elsewhere(path)
        with pytest.raises(ConfigLockError, match="already used by a different Redis Cluster node"):
            lock_config(str(path))
    finally:
        os.close(fd)
    assert not locked_elsewhere(path)


def test_lock_of_a_missing_directory(tmp_path):
    with pytest.raises(ConfigLockError, match="Can't open"):
        lock_config(str(tmp_path / "nowhere" / "nodes.conf"))


@pytest.mark.parametrize("fsync", [False, True])
def test_write_replaces_and_keeps_the_lock(tmp_path, fsync):
    path = tmp_path / "nodes.conf"
    path.write_text("old\n")
    fd = lock_config(str(path))
    new_fd = write_config(str(path), "new text\nvars currentEpoch 0 lastVoteEpoch 0\n", fsync, fd)
    try:
        assert new_fd is not None and new_fd != -1
        assert path.read_text() == "new text\nvars currentEpoch 0 lastVoteEpoch 0\n"
        assert locked_elsewhere(path)  # the lock moved to the new file
        assert sorted(p.name for p in tmp_path.iterdir()) == ["nodes.conf"]  # no temp file left
    finally:
        os.close(new_fd)
    assert not locked_elsewhere(path)


def test_write_without_a_lock(tmp_path):
    path = tmp_path / "nodes.conf"
    assert write_config(str(path), "x\n", False, None) is None
    assert path.read_text() == "x\n"


def test_bus_port_and_config_path():
    config = Config()
    config.set("port", "7000", at_startup=True)
    assert bus_port(config) == 17000
    config.set("cluster-port", "18000", at_startup=True)
    assert bus_port(config) == 18000
    config.set("dir", "/var/lib/x", at_startup=True)
    assert config_path(config) == "/var/lib/x/nodes.conf"
    config.set("cluster-config-file", "/etc/n.conf", at_startup=True)
    assert config_path(config) == "/etc/n.conf"


def test_cluster_options_take_effect():
    config = Config()
    config.load_text("cluster-enabled yes\ncluster-node-timeout 2000\n"
                     "cluster-slot-stats-enabled yes\n"
                     "cluster-compatibility-sample-ratio 5\n")
    assert config["cluster-enabled"] is True
    assert config["cluster-slot-stats-enabled"] is True
    assert config.no_effect_read == ["cluster-compatibility-sample-ratio"]


class Settings:
    """The settings' fields the shell copies (a plain record)."""

    def __init__(self) -> None:
        self.node_timeout = 15000
        self.announce_ip = b""
        self.require_full_coverage = True


def test_settings_follow_config_set():
    config = Config()
    values = settings_values(config)
    assert values["node_timeout"] == 15000
    assert values["announce_ip"] == b""
    assert values["repl_ping_period_s"] == 10
    settings = Settings()
    config.set("cluster-node-timeout", "3000")
    config.set("cluster-announce-ip", "10.0.0.7")
    config.set("cluster-require-full-coverage", "no")
    refresh_settings(settings, config)
    assert (settings.node_timeout, settings.announce_ip, settings.require_full_coverage) == (
        3000, b"10.0.0.7", False)


@pytest.mark.parametrize("argv", [[b"REPLICAOF", b"127.0.0.1", b"6379"], [b"REPLICAOF", b"NO", b"ONE"],
                                  [b"SLAVEOF", b"127.0.0.1", b"bad-port"]])
def test_replicaof_refused_in_cluster_mode(argv):
    """redis-server 7.0.15 with cluster-enabled yes answers each of these so."""
    from tests.support.engine_harness import Harness

    h = Harness()
    h.engine.config.set("cluster-enabled", "yes", at_startup=True)
    assert h.err(*argv) == b"ERR REPLICAOF not allowed in cluster mode."
    assert not h.engine.replication.is_replica


# -- the actions the shell carries out on a real engine ----------------------------------
def shell_on(engine):
    from tidelog.server.cluster_bus import ClusterShell
    return ClusterShell(engine, None, "unused-nodes.conf", None, lambda: "")


def test_delete_slot_keys_deletes_and_propagates():
    from tests.support.cluster_control import ClusterHarness
    from tidelog.cluster.actions import DeleteSlotKeys
    from tidelog.keyslot import key_slot

    h = ClusterHarness()  # cluster mode: the per-slot key index finds the keys
    for slot in range(16384):
        h.topology.assign(slot, h.me)
    h.topology.state_ok = True
    h.ok("SET", "{a}1", "x")
    h.ok("SET", "{a}2", "y")
    h.ok("SET", "b", "z")
    h.ok("CONFIG", "SET", "notify-keyspace-events", "Kg")
    watcher = h.new_client()
    h("SUBSCRIBE", "__keyspace@0__:{a}1", client=watcher)
    h.take_effects()
    shell_on(h.engine).carry_out(DeleteSlotKeys([key_slot(b"{a}")]))
    assert h("EXISTS", "{a}1", "{a}2") == 0 and h("EXISTS", "b") == 1
    assert sorted(h.take_effects()) == [[b"DEL", b"{a}1"], [b"DEL", b"{a}2"]]
    assert [p.items for p in watcher.inbox] == [[b"message", b"__keyspace@0__:{a}1", b"del"]]


@pytest.mark.parametrize("shard", [False, True])
def test_deliver_reaches_local_subscribers(shard):
    from tests.support.engine_harness import Harness
    from tidelog.cluster.actions import Deliver

    h = Harness()
    sub = h.new_client()
    h("SSUBSCRIBE" if shard else "SUBSCRIBE", "ch", client=sub)
    pat = h.new_client()
    h("PSUBSCRIBE", "c*", client=pat)
    shell_on(h.engine).carry_out(Deliver(b"ch", b"hello", shard))
    kind = b"smessage" if shard else b"message"
    assert [p.items for p in sub.inbox] == [[kind, b"ch", b"hello"]]
    assert [p.items for p in pat.inbox] == ([] if shard else
                                                [[b"pmessage", b"c*", b"ch", b"hello"]])


def test_pause_writes_and_unpause():
    from tests.support.engine_harness import Harness
    from tidelog.cluster.actions import PauseWrites
    from tidelog.server.cluster_bus import now_ms

    h = Harness()
    shell = shell_on(h.engine)
    shell.carry_out(PauseWrites(now_ms() + 60_000))
    assert h.engine.ops.pause_mode == "write"
    shell.carry_out(PauseWrites(0))
    assert h.engine.ops.pause_mode is None


def test_announced_ports_follow_the_options():
    from tidelog.cluster.messages import MASTER, MYSELF
    from tidelog.cluster.nodes import Node
    from tidelog.server.cluster_bus import announce_myself

    config = Config()
    config.set("port", "7000", at_startup=True)
    me = Node(name=b"a" * 40, flags=MYSELF | MASTER)
    announce_myself(me, config)
    assert (me.port, me.cport, me.pport) == (7000, 17000, 0)
    config.set("cluster-announce-port", "30000")
    config.set("cluster-announce-bus-port", "30001")
    config.set("cluster-announce-tls-port", "30002")
    announce_myself(me, config)
    # without tls-cluster the TLS port is not announced (7.0.15 sends pport 0)
    assert (me.port, me.cport, me.pport) == (30000, 30001, 0)


def test_announced_ports_under_tls_cluster():
    """7.0.15: the TLS port is the port, the plain one pport; the bus port
    follows the TLS port; cluster-announce-tls-port (with
    cluster-announce-port as pport) or cluster-announce-port over them."""
    from tidelog.cluster.messages import MASTER, MYSELF
    from tidelog.cluster.nodes import Node
    from tidelog.server.cluster_bus import announce_myself

    config = Config()
    for name, value in (("port", "7000"), ("tls-port", "7100"), ("tls-cluster", "yes")):
        config.set(name, value, at_startup=True)
    assert bus_port(config) == 17100
    me = Node(name=b"a" * 40, flags=MYSELF | MASTER)
    announce_myself(me, config)
    assert (me.port, me.cport, me.pport) == (7100, 17100, 7000)
    announce_myself(me, config, 17200)  # the port the bus listens on
    assert me.cport == 17200
    config.set("cluster-announce-port", "30000")
    announce_myself(me, config)
    assert (me.port, me.pport) == (30000, 7000)
    config.set("cluster-announce-tls-port", "30002")
    announce_myself(me, config)
    assert (me.port, me.pport) == (30002, 30000)
    config.set("cluster-announce-port", "0")
    announce_myself(me, config)
    assert (me.port, me.pport) == (30002, 0)
