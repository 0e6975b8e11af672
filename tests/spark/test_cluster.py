"""The ``tidelog`` data source on a Redis Cluster: an all-Tidelog cluster of three
primaries (one of them with a replica) and a cluster of three redis-server 7.0.15
nodes, to show that nothing in it is Tidelog's own.

Batch reads plan per shard (CLUSTER SHARDS) and follow MOVED after a slot moved
since planning; streaming offsets are per stream key, so a slot moved while a
query runs neither loses nor repeats an entry; writes route each XADD by its
key's slot, idempotently with IDMP; the archive job takes every stream a pattern
matches on every primary.  Each cluster is started once per module, its
processes stopped in the fixture's finaliser; every wait is bounded.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from tests.support.cluster import ClusterNodes, require_cluster_mode
from tests.support.processes import ProcessGroup
from tests.support.spark_data import fill
from tidelog.keyslot import key_slot

pq = pytest.importorskip("pyarrow.parquet")

WAIT_S = 30.0
TOPIC = [f"topic:{{{i}}}" for i in range(4)]          # hash tags: four slots


def start_cluster(kind: str, tmp_path_factory, replica: bool = False):
    group = ProcessGroup(tmp_path_factory.mktemp(f"spark-cluster-{kind}"))
    cluster = ClusterNodes(group, tmp_path_factory.mktemp("nodes"))
    start = cluster.tidelog if kind == "tidelog" else cluster.redis
    for _ in range(3):
        start()
    result = cluster.create()
    assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    if replica:
        extra = start()
        primary = cluster.nodes[0]
        result = cluster.cli("--cluster", "add-node", extra.address, primary.address,
                             "--cluster-slave", "--cluster-master-id", primary.node_id())
        assert result.returncode == 0, result.stdout + result.stderr + cluster.diagnostics()
    cluster.wait_agree(60)
    return group, cluster


@pytest.fixture(scope="module")
def tidelog_cluster(tmp_path_factory):
    require_cluster_mode()
    group = None
    try:
        group, cluster = start_cluster("tidelog", tmp_path_factory, replica=True)
        yield cluster
    finally:
        if group is not None:
            group.stop_all()


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory):
    group = None
    try:
        group, cluster = start_cluster("redis", tmp_path_factory)
        yield cluster
    finally:
        if group is not None:
            group.stop_all()


def url_of(cluster: ClusterNodes) -> str:
    return f"redis://127.0.0.1:{cluster.nodes[0].port}/0"


def cluster_client(cluster: ClusterNodes) -> RedisCluster:
    return RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port, decode_responses=True,
                        socket_timeout=10)


@pytest.fixture
def tidelog_clean(tidelog_cluster):
    flush(tidelog_cluster)
    return tidelog_cluster


@pytest.fixture
def redis_clean(redis_cluster):
    flush(redis_cluster)
    return redis_cluster


def flush(cluster: ClusterNodes) -> None:
    for node in cluster.nodes:
        with node.client() as c:
            if c.execute_command("ROLE")[0] == "master":
                c.flushall()


def owner(cluster: ClusterNodes, key: str):
    """The primary node serving ``key``'s slot now."""
    slot = key_slot(key.encode())
    with cluster.nodes[0].client() as c:
        text = c.execute_command("CLUSTER", "NODES")
    for line in text.strip().splitlines():
        words = line.split()
        for part in words[8:]:
            if part.startswith("["):            # a slot in migration
                continue
            lo, _, hi = part.partition("-")
            if int(lo) <= slot <= int(hi or lo):
                port = int(words[1].split("@")[0].rsplit(":", 1)[1])
                return next(n for n in cluster.nodes if n.port == port)
    raise AssertionError(f"no node serves slot {slot}")


def move_slot(cluster: ClusterNodes, slot: int, source, target) -> None:
    """Move one slot with its keys, the steps redis-cli --cluster reshard takes:
    IMPORTING/MIGRATING, MIGRATE of every key, then SETSLOT NODE everywhere."""
    sid, tid = source.node_id(), target.node_id()
    with target.client() as t, source.client() as s:
        t.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", sid)
        s.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", tid)
        while keys := s.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
            s.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 10000, "KEYS", *keys)
        t.execute_command("CLUSTER", "SETSLOT", slot, "NODE", tid)
        s.execute_command("CLUSTER", "SETSLOT", slot, "NODE", tid)
    for node in cluster.nodes:
        if node not in (source, target):
            with node.client() as c:
                if c.execute_command("ROLE")[0] == "master":
                    c.execute_command("CLUSTER", "SETSLOT", slot, "NODE", tid)
    cluster.wait_agree(60)


def replica_pair(cluster: ClusterNodes):
    """The (primary, replica) pair of the shard that has a replica."""
    for node in cluster.nodes:
        with node.client() as c:
            role = c.execute_command("ROLE")
        if role[0] == "slave":
            return next(n for n in cluster.nodes if n.port == int(role[2])), node
    raise AssertionError("no replica")


def replica_online_everywhere(cluster: ClusterNodes, replica) -> bool:
    """Whether every node's CLUSTER SHARDS gives ``replica`` the health "online"."""
    rid = replica.node_id()
    for node in cluster.nodes:
        with node.client() as c:
            shards = c.execute_command("CLUSTER", "SHARDS")
        health = [n["health"] for s in shards for n in s["nodes"] if n["id"] == rid]
        if health != ["online"]:
            return False
    return True


def primary_of(cluster: ClusterNodes, node):
    """``node`` if it is a primary, else its primary."""
    with node.client() as c:
        role = c.execute_command("ROLE")
    return node if role[0] == "master" else next(
        n for n in cluster.nodes if n.port == int(role[2]))


def fail_over(cluster: ClusterNodes) -> None:
    """CLUSTER FAILOVER on the replica (the coordinated kind: no write is lost), until
    every node agrees on the new roles."""
    primary, replica = replica_pair(cluster)
    with replica.client() as c:
        c.execute_command("CLUSTER", "FAILOVER")
    wait_for(lambda: replica_pair(cluster) == (replica, primary), "the failover", 60)
    cluster.wait_agree(60)


def other_primary(cluster: ClusterNodes, node):
    for n in cluster.nodes:
        if n is not node:
            with n.client() as c:
                if c.execute_command("ROLE")[0] == "master":
                    return n
    raise AssertionError("no other primary")


def all_entries(cluster: ClusterNodes, keys) -> set[tuple[str, str]]:
    c = cluster_client(cluster)
    try:
        return {(k, e[0]) for k in keys for e in c.xrange(k)}
    finally:
        c.close()


def reader_of(spark, **options):
    from tidelog.spark.options import ReadOptions
    from tidelog.spark.reader import TidelogReader
    from tidelog.spark.schema import default_schema

    return TidelogReader(ReadOptions.parse(options), default_schema())


def rows_of_partitions(reader, parts) -> list[tuple[str, str]]:
    out = []
    for part in parts:
        for batch in reader.read(part):
            out += zip(batch.column("stream").to_pylist(), batch.column("id").to_pylist())
    return out


# -- batch reads ----------------------------------------------------------------------------

def test_batch_read_plans_per_shard_and_reads_every_entry(spark, tidelog_clean):
    cluster = tidelog_clean
    keys = [f"orders:{{{i}}}" for i in range(9)]
    c = cluster_client(cluster)
    for i, key in enumerate(keys):
        fill(c, key, 300 + 50 * i, seed=i)
    c.close()
    expected = all_entries(cluster, keys)

    reader = reader_of(spark, url=url_of(cluster), pattern="orders:*", numPartitions="6")
    parts = reader.partitions()
    assert len(parts) == 6
    for part in parts:               # one shard per partition, the one that owns its keys
        assert {owner(cluster, key).address for key, _, _ in part.ranges} == {part.node}
    assert len({p.node for p in parts}) == 3

    df = (spark.read.format("tidelog").option("url", url_of(cluster))
          .option("pattern", "orders:*").option("numPartitions", 6).load())
    rows = [(r.stream, r.id) for r in df.select("stream", "id").collect()]
    assert len(rows) == len(expected) and set(rows) == expected


def test_a_topic_produced_with_the_helper_reads_as_all_its_partitions(spark, tidelog_clean):
    from tidelog.client.partitions import partition_keys
    from tidelog.client.topic import Topic

    cluster = tidelog_clean
    c = cluster_client(cluster)
    topic = Topic(c, "events", 6)
    sent = {topic.produce(f"user-{i % 17}", {"n": str(i)}) for i in range(240)}
    c.close()
    keys = partition_keys("events", 6)
    assert {key for key, _ in sent} == set(keys)   # the keys spread over all six partitions

    df = (spark.read.format("tidelog").option("url", url_of(cluster))
          .option("topic", "events").option("topicPartitions", 6).load())
    rows = {(r.stream, r.id) for r in df.select("stream", "id").collect()}
    assert rows == {(key, entry_id if isinstance(entry_id, str) else entry_id.decode())
                    for key, entry_id in sent}


def test_a_slot_moved_after_planning_is_read_from_its_new_owner(spark, tidelog_clean):
    cluster = tidelog_clean
    c = cluster_client(cluster)
    for i, key in enumerate(TOPIC):
        fill(c, key, 400, seed=i)
    c.close()
    expected = all_entries(cluster, TOPIC)
    reader = reader_of(spark, url=url_of(cluster), stream=",".join(TOPIC), numPartitions="8",
                       pageSize="50")
    parts = reader.partitions()
    moved = TOPIC[0]
    source = owner(cluster, moved)
    target = other_primary(cluster, source)
    move_slot(cluster, key_slot(moved.encode()), source, target)
    try:
        assert owner(cluster, moved) is target
        rows = rows_of_partitions(reader, parts)       # planned for the old owner
        assert len(rows) == len(expected) and set(rows) == expected
    finally:
        move_slot(cluster, key_slot(moved.encode()), target, source)


def test_read_replicas_reads_from_the_replica_with_readonly(spark, tidelog_clean):
    cluster = tidelog_clean
    primary, replica = replica_pair(cluster)
    # keys of the shard that has the replica
    keys = [k for k in (f"r:{{{i}}}" for i in range(40)) if owner(cluster, k) is primary][:3]
    c = cluster_client(cluster)
    for i, key in enumerate(keys):
        fill(c, key, 200, seed=i)
    c.close()
    expected = all_entries(cluster, keys)
    with primary.client() as p:
        p.execute_command("WAIT", 1, 10000)
    # the plan asks CLUSTER SHARDS of any node: each says "loading" for a replica
    # until a ping of it with an offset past 0 reached it (Redis's rule)
    wait_for(lambda: replica_online_everywhere(cluster, replica), "the replica online", 30)
    with replica.client() as r:
        before = r.info("commandstats").get("cmdstat_xrange", {}).get("calls", 0)
    reader = reader_of(spark, url=url_of(cluster), stream=",".join(keys), readReplicas="true")
    parts = reader.partitions()
    assert {p.node for p in parts} == {replica.address}
    rows = rows_of_partitions(reader, parts)
    assert len(rows) == len(expected) and set(rows) == expected
    with replica.client() as r:
        after = r.info("commandstats").get("cmdstat_xrange", {}).get("calls", 0)
    assert after > before, "the replica served no XRANGE"


# -- streaming -------------------------------------------------------------------------------

class Writer:
    """Adds one entry to each key per round, round robin, until stopped (at most
    ``max_rounds``), through a cluster client that follows redirections; every
    acknowledged ID is recorded."""

    def __init__(self, cluster: ClusterNodes, keys, max_rounds: int = 5000) -> None:
        self.client = RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port,
                                   decode_responses=True, socket_timeout=10,
                                   retry=Retry(ExponentialBackoff(cap=0.5, base=0.01), 20))
        self.keys, self.max_rounds = keys, max_rounds
        self.added: set[tuple[str, str]] = set()
        self.rounds = 0
        self.error: BaseException | None = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self.stop.is_set() and self.rounds < self.max_rounds:
                for key in self.keys:
                    self.added.add((key, self.client.xadd(key, {"n": self.rounds})))
                self.rounds += 1
                time.sleep(0.005)
        except BaseException as exc:      # reported by the test
            self.error = exc

    def __enter__(self) -> Writer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(120)
        self.client.close()


def wait_for(predicate, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.mark.long
def test_a_reshard_during_a_streaming_query_delivers_every_entry_once(spark, tidelog_clean,
                                                                       tmp_path: Path):
    cluster = tidelog_clean
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    df = (spark.readStream.format("tidelog").option("url", url_of(cluster))
          .option("stream", ",".join(TOPIC)).option("maxEntriesPerTrigger", 150).load())
    query = (df.select("stream", "id").writeStream.format("parquet")
             .option("path", str(out)).option("checkpointLocation", str(checkpoint))
             .trigger(processingTime="200 milliseconds").start())
    moved = [TOPIC[0], TOPIC[2]]
    homes = {k: owner(cluster, k) for k in moved}
    try:
        with Writer(cluster, TOPIC) as writer:
            wait_for(lambda: writer.rounds > 100, "the first entries")
            wait_for(lambda: any(p["numInputRows"] for p in query.recentProgress),
                     "a first micro-batch")
            for key in moved:                   # while the writer and the query run
                move_slot(cluster, key_slot(key.encode()), homes[key],
                          other_primary(cluster, homes[key]))
            fail_over(cluster)                  # and the shard with a replica fails over
            last = max((p["batchId"] for p in query.recentProgress), default=-1)
            after = writer.rounds
            wait_for(lambda: writer.rounds > after + 100 or writer.error is not None,
                     "entries added after the moves")
            wait_for(lambda: any(p["numInputRows"] and p["batchId"] > last
                                 for p in query.recentProgress),
                     "a micro-batch after the moves")
        assert writer.error is None, writer.error
        assert len(writer.added) == 4 * writer.rounds
        assert all(owner(cluster, k) is not homes[k] for k in moved)
        query.processAllAvailable()
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    rows = [(r.stream, r.id) for r in spark.read.parquet(str(out)).collect()]
    assert len(rows) == len(set(rows)), "an entry was delivered twice"
    assert set(rows) == all_entries(cluster, TOPIC) == writer.added
    for key in moved:                           # the slots back to their shards
        move_slot(cluster, key_slot(key.encode()), owner(cluster, key),
                  primary_of(cluster, homes[key]))


# -- writes and the archive --------------------------------------------------------------------

def test_idempotent_write_routes_by_slot_and_adds_nothing_twice(spark, tidelog_clean):
    cluster = tidelog_clean
    rows = [(TOPIC[i % 4], i) for i in range(400)]
    df = spark.createDataFrame(rows, "stream string, n long").repartition(2).sortWithinPartitions("n")

    def write():
        (df.write.format("tidelog").option("url", url_of(cluster)).option("idempotent", "true")
         .option("producerId", "job-1").mode("append").save())

    write()
    write()                                     # a retried job: same producer, same IDs
    c = cluster_client(cluster)
    try:
        for i, key in enumerate(TOPIC):
            got = sorted(int(e[1]["n"]) for e in c.xrange(key))
            assert got == list(range(i, 400, 4))
    finally:
        c.close()


def test_archive_all_takes_every_matching_stream_of_every_primary(spark, tidelog_clean,
                                                                   tmp_path: Path):
    from tidelog.spark.archive_job import archive_all

    cluster = tidelog_clean
    c = cluster_client(cluster)
    keys = [f"logs:{{{i}}}" for i in range(6)]
    for i, key in enumerate(keys):
        fill(c, key, 100, seed=i)
    assert len({owner(cluster, k).port for k in keys}) == 3
    summaries = archive_all(spark, url_of(cluster), pattern="logs:*", path=tmp_path,
                            cut="1020000-0", progress=None)
    try:
        assert sorted(s.stream for s in summaries) == keys
        for summary in summaries:
            assert summary.rows > 0
            assert summary.rows + c.xlen(summary.stream) == 100
    finally:
        c.close()


# -- plain Redis Cluster (redis-server 7.0.15) --------------------------------------------------

def test_plain_redis_cluster_batch_and_stream_reads_and_writes(spark, redis_clean, tmp_path):
    cluster = redis_clean
    c = cluster_client(cluster)
    for i, key in enumerate(TOPIC):
        fill(c, key, 250, seed=i)
    c.close()
    expected = all_entries(cluster, TOPIC)
    url = url_of(cluster)
    df = (spark.read.format("tidelog").option("url", url).option("pattern", "topic:*")
          .option("numPartitions", 5).load())
    rows = [(r.stream, r.id) for r in df.select("stream", "id").collect()]
    assert len(rows) == len(expected) and set(rows) == expected

    out = tmp_path / "out"
    q = (spark.readStream.format("tidelog").option("url", url).option("pattern", "topic:*")
         .load().select("stream", "id").writeStream.format("parquet")
         .option("path", str(out)).option("checkpointLocation", str(tmp_path / "ck"))
         .trigger(availableNow=True).start())
    assert q.awaitTermination(300) and q.exception() is None
    streamed = [(r.stream, r.id) for r in spark.read.parquet(str(out)).collect()]
    assert len(streamed) == len(expected) and set(streamed) == expected

    (spark.createDataFrame([(TOPIC[i % 4], i) for i in range(100)], "stream string, n long")
     .write.format("tidelog").option("url", url).mode("append").save())
    c = cluster_client(cluster)
    try:
        assert sum(c.xlen(k) for k in TOPIC) == 4 * 250 + 100
    finally:
        c.close()


def test_cluster_false_refuses_a_cross_slot_plain_client(spark, redis_clean):
    """``cluster=false`` talks to the one node: keys of other slots get its MOVED."""
    cluster = redis_clean
    c = cluster_client(cluster)
    for key in TOPIC:
        c.xadd(key, {"n": 1})
    c.close()
    here = cluster.nodes[0]
    elsewhere = [k for k in TOPIC if owner(cluster, k) is not here]
    assert elsewhere
    reader = reader_of(spark, url=url_of(cluster), stream=elsewhere[0], cluster="false")
    with pytest.raises(redis.exceptions.MovedError):
        reader.partitions()
