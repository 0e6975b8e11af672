"""Resharding under load across Tidelog and redis-server 7.0.15: while
writers XADD to 64 streams ``orders:{i}`` and readers XREADGROUP (BLOCK)
and XACK them through redis-py's RedisCluster, ``redis-cli --cluster
reshard`` moves 1000 slots from the redis-server node to a Tidelog node,
then 1000 from that Tidelog node to the redis-server node.  Afterwards
every acknowledged XADD is in its stream exactly once, every delivered
entry is acknowledged or pending, and the clients saw nothing but what
they follow by themselves (MOVED, ASK, TRYAGAIN).

The processes go through the ``processes`` fixture (killed in its
finaliser); the load is bounded in count and time."""

from __future__ import annotations

import threading
import time

import pytest
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from tests.support.cluster import ClusterNodes, require_cluster_mode

pytestmark = pytest.mark.long  # about two minutes: make test-long

STREAMS = [f"orders:{{{i}}}" for i in range(64)]
GROUP = "workers"
LOAD_S = 120.0  # the most the load may run


@pytest.fixture
def cluster(processes, tmp_path):
    require_cluster_mode()
    return ClusterNodes(processes, tmp_path)


def client_of(node) -> RedisCluster:
    return RedisCluster(host="127.0.0.1", port=node.port, decode_responses=True,
                        socket_timeout=20,
                        retry=Retry(ExponentialBackoff(cap=0.5, base=0.01), 10))


class Load:
    """Writers and readers in threads; what they were told, and any error."""

    def __init__(self, entry) -> None:
        self.entry = entry
        self.stop = threading.Event()
        self.acked_adds: dict[str, list[str]] = {s: [] for s in STREAMS}
        self.delivered: dict[str, set[str]] = {s: set() for s in STREAMS}
        self.acked: dict[str, set[str]] = {s: set() for s in STREAMS}
        self.errors: list[str] = []
        self.threads = [threading.Thread(target=self._writer, args=(STREAMS[i::2],))
                        for i in range(2)]
        self.threads += [threading.Thread(target=self._reader, args=(STREAMS[i::2], f"c{i}"))
                         for i in range(2)]
        self.deadline = time.monotonic() + LOAD_S

    def _running(self) -> bool:
        return not self.stop.is_set() and time.monotonic() < self.deadline

    def _writer(self, streams: list[str]) -> None:
        client = client_of(self.entry)
        try:
            n = 0
            while self._running() and n < 200_000:
                stream = streams[n % len(streams)]
                self.acked_adds[stream].append(client.xadd(stream, {"n": str(n)}))
                n += 1
        except Exception as exc:  # anything a cluster client does not follow itself
            self.errors.append(f"writer: {exc!r}")
        finally:
            client.close()

    def _reader(self, streams: list[str], consumer: str) -> None:
        client = client_of(self.entry)
        try:
            while self._running():
                for stream in streams:
                    got = client.xreadgroup(GROUP, consumer, {stream: ">"}, count=50, block=5)
                    ids = [entry_id for _, entries in got for entry_id, _ in entries]
                    if ids:
                        self.delivered[stream].update(ids)
                        if client.xack(stream, GROUP, *ids) != len(ids):
                            self.errors.append(f"reader: XACK {stream} acked fewer")
                        self.acked[stream].update(ids)
        except Exception as exc:
            self.errors.append(f"reader: {exc!r}")
        finally:
            client.close()

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(60)


def reshard(cluster: ClusterNodes, source, target, slots: int) -> float:
    started = time.monotonic()
    result = cluster.cli("--cluster", "reshard", source.address, "--cluster-from",
                         source.node_id(), "--cluster-to", target.node_id(), "--cluster-slots",
                         str(slots), "--cluster-yes", timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    return time.monotonic() - started


def test_reshard_between_redis_and_tidelog_under_stream_load(cluster):
    tidelog_a = cluster.tidelog()
    cluster.tidelog()
    redis_node = cluster.redis()
    result = cluster.create()
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    cluster.wait_agree()
    setup = client_of(tidelog_a)
    for stream in STREAMS:
        setup.xgroup_create(stream, GROUP, id="0", mkstream=True)
    setup.close()

    with Load(tidelog_a) as load:
        time.sleep(1.0)
        there = reshard(cluster, redis_node, tidelog_a, 1000)
        back = reshard(cluster, tidelog_a, redis_node, 1000)
        time.sleep(1.0)
    print(f"reshard under load: 1000 slots redis->tidelog {there:.1f} s, "
          f"1000 tidelog->redis {back:.1f} s; "
          f"{sum(map(len, load.acked_adds.values()))} XADDs acknowledged")
    assert not load.errors, load.errors[:5]
    cluster.wait_agree()
    check = cluster.check(redis_node)
    assert check.returncode == 0 and "[OK] All 16384 slots covered." in check.stdout

    client = client_of(tidelog_a)
    try:
        moved = 0
        for stream in STREAMS:
            present = [entry_id for entry_id, _ in client.xrange(stream)]
            assert len(present) == len(set(present)), f"{stream}: an entry twice"
            missing = set(load.acked_adds[stream]) - set(present)
            assert not missing, f"{stream}: {len(missing)} acknowledged XADDs missing"
            pending = {p["message_id"] for p in
                       client.xpending_range(stream, GROUP, "-", "+", 100_000)}
            lost = load.delivered[stream] - load.acked[stream] - pending
            assert not lost, f"{stream}: delivered, neither acknowledged nor pending: {lost}"
            assert load.acked[stream] <= set(present)
            moved += bool(load.acked_adds[stream])
        assert moved == len(STREAMS)
    finally:
        client.close()
