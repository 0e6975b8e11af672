"""tidelog.client.topic on real clusters of three primaries, one of Tidelog
nodes and one of redis-server 7.0.15 nodes (the helper is client code: it
must work on both), through redis-py's RedisCluster: partitions spread one
range per primary, every message produced is delivered exactly once to one
of two consumers of one group and acknowledged, a key's messages keep their
order, a dead consumer's pending messages are claimed, and consuming goes on
while a partition's slot moves (ASK, then MOVED).

Consumers take turns in one thread, so nothing depends on timing; every
loop is bounded.  The processes go through a ``ProcessGroup`` stopped in the
fixture's finaliser."""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict

import pytest
import redis
import redis.asyncio.cluster
from redis.cluster import RedisCluster

from tests.support.cluster import WAIT_S, ClusterNodes, require_cluster_mode
from tests.support.processes import ProcessGroup
from tests.support.readme import ROOT, blocks
from tests.support.redis_oracle import free_port
from tidelog.client.aio import AsyncTopic
from tidelog.client.partitions import partition_for, slot_range
from tidelog.client.topic import Message, Topic
from tidelog.keyslot import key_slot

MASTERS = 3
DOCS = ROOT / "docs" / "topics.md"


@pytest.fixture(scope="module", params=["tidelog", "redis"])
def cluster(request, tmp_path_factory):
    require_cluster_mode()
    group = ProcessGroup(tmp_path_factory.mktemp(f"topic-{request.param}"))
    try:
        nodes = ClusterNodes(group, tmp_path_factory.mktemp("nodes"))
        for _ in range(MASTERS):
            getattr(nodes, request.param)()
        result = nodes.create()
        assert result.returncode == 0, result.stdout + result.stderr + nodes.diagnostics()
        nodes.wait_agree()
        yield nodes
    finally:
        group.stop_all()


def connect(cluster: ClusterNodes, node: int = 0, **kw) -> RedisCluster:
    kw.setdefault("decode_responses", True)
    return RedisCluster(host="127.0.0.1", port=cluster.nodes[node].port, socket_timeout=10, **kw)


def primaries(client: RedisCluster) -> dict[str, range]:
    """node name -> the slot range it serves (one range each, as created)."""
    out = {}
    for (first, last), info in client.cluster_slots().items():
        out[f"{info['primary'][0]}:{info['primary'][1]}"] = range(first, last + 1)
    return out


def drain(consumers, expected: int, count: int = 7, limit: int = 1000) -> dict[str, list[Message]]:
    """The consumers read in turns (acknowledging what they got) until
    ``expected`` messages came in all, or ``limit`` turns passed."""
    got: dict[str, list[Message]] = defaultdict(list)
    for turn in range(limit):
        consumer = consumers[turn % len(consumers)]
        messages = consumer.read(count=count, block_ms=0)
        assert consumer.ack(messages) == len(messages)
        got[consumer.name].extend(messages)
        if sum(len(m) for m in got.values()) >= expected:
            break
    return got


def field(message: Message, name: str):
    value = message.fields.get(name, message.fields.get(name.encode()))
    return value.decode() if isinstance(value, bytes) else value


def test_partitions_spread_one_range_per_primary(cluster):
    client = connect(cluster)
    try:
        served = primaries(client)
        assert sorted(served.values(), key=lambda r: r.start) == [
            slot_range(j, MASTERS) for j in range(MASTERS)]  # redis-cli's split
        for per_primary in (1, 2, 4):
            topic = Topic(client, "spread", MASTERS * per_primary)
            placement = topic.placement()
            assert sorted(len(v) for v in placement.values()) == [per_primary] * MASTERS
            for name, indexes in placement.items():
                for i in indexes:
                    assert topic.partitions[i].slot in served[name]
        topic = Topic(client, "spread", 6)
        assert topic.create_group("g") == 6
        assert topic.create_group("g") == 0  # BUSYGROUP: left as it is
        for p in topic.partitions:  # each stream is on the primary of its slot
            node = next(n for n in cluster.nodes
                        if f"127.0.0.1:{n.port}" == client.get_node_from_key(p.key).name)
            assert node.client().execute_command("CLUSTER", "KEYSLOT", p.key) == p.slot
            assert node.client().exists(p.key) == 1
    finally:
        client.close()


@pytest.mark.parametrize("protocol,decode", [(2, True), (3, False)])
def test_every_message_once_in_key_order(cluster, protocol, decode):
    name = f"orders-{protocol}"
    producer = connect(cluster, 0, protocol=protocol, decode_responses=decode)
    readers = [connect(cluster, i, protocol=protocol, decode_responses=decode) for i in (1, 2)]
    try:
        topic = Topic(producer, name, 6, maxlen=10_000)
        assert topic.create_group("workers") == 6
        produced = []
        seq = Counter()
        batch = []
        for i in range(240):  # 30 keys, one batch, then one at a time, then keyless
            key = f"customer:{i % 30}"
            seq[key] += 1
            batch.append((key, {"key": key, "seq": seq[key]}))
        produced += [(s, i, k["key"]) for (s, i), (_, k) in zip(topic.produce_many(batch), batch)]
        for i in range(60):
            key = f"customer:{i % 30}"
            seq[key] += 1
            stream, entry = topic.produce(key, {"key": key, "seq": seq[key]})
            produced.append((stream, entry, key))
        for _ in range(30):
            stream, entry = topic.produce(None, {"key": "-", "seq": 0})
            produced.append((stream, entry, "-"))
        assert topic.produce_many([]) == []
        for stream, _, key in produced:
            if key != "-":
                assert stream == topic.keys[partition_for(key, 6)]
        keyless = Counter(stream for stream, _, key in produced if key == "-")
        assert sorted(keyless.values()) == [5] * 6  # round robin
        assert sum(topic.lengths()) == len(produced)
        assert topic.rerouted == 0  # each batch went straight to the primaries

        consumers = [Topic(r, name, 6).consumer("workers", f"c{i}") for i, r in enumerate(readers)]
        got = drain(consumers, len(produced))
        delivered = [(m.stream, m.id) for ms in got.values() for m in ms]
        assert len(delivered) == len(set(delivered)) == len(produced)
        assert set(delivered) == {(s, i) for s, i, _ in produced}
        assert all(len(ms) > 0 for ms in got.values()), "one consumer got everything"
        assert [c.rerouted for c in consumers] == [0, 0]  # each read went straight to its primary
        assert consumers[0].read(block_ms=0) == [] and consumers[0].pending() == 0
        assert consumers[1].read(block_ms=10) == []  # the blocking read times out empty

        # per key: the partition holds its messages in production order, and
        # each consumer saw its share of them in that order
        for consumer_messages in got.values():
            last = Counter()
            for m in consumer_messages:
                key = field(m, "key")
                if key != "-":
                    assert m.partition == partition_for(key, 6)
                    assert int(field(m, "seq")) > last[key]
                    last[key] = int(field(m, "seq"))
        for p in topic.partitions:
            order = defaultdict(list)
            for _entry_id, fields in producer.xrange(p.key):
                fields = {(k.decode() if isinstance(k, bytes) else k): v for k, v in fields.items()}
                order[fields["key"]].append(int(fields["seq"]))
            for key, seqs in order.items():
                if key not in ("-", b"-"):
                    assert seqs == sorted(seqs)
    finally:
        producer.close()
        for r in readers:
            r.close()


def test_a_dead_consumers_messages_are_claimed(cluster):
    client = connect(cluster)
    try:
        topic = Topic(client, "claims", 3)
        topic.create_group("g", id="0")
        topic.produce_many((f"k{i}", {"n": i}) for i in range(60))
        dying = connect(cluster, 2)
        try:
            dead = Topic(dying, "claims", 3).consumer("g", "dead")
            lost = dead.read(count=4, block_ms=0)  # read, never acknowledged
            assert len(lost) == 12
        finally:
            dying.close()  # gone: its connections closed, its messages pending
        alive = topic.consumer("g", "alive")
        rest = drain([alive], 48)["alive"]
        assert len(rest) == 48 and alive.pending() == 12
        assert alive.claim(min_idle_ms=3_600_000) == []  # not idle for an hour
        claimed = alive.claim(min_idle_ms=0, count=2)  # two per partition and call:
        assert len(claimed) == 6
        claimed += alive.claim(min_idle_ms=0, count=2)  # the cursors went on from there
        assert sorted((m.stream, m.id) for m in claimed) == sorted((m.stream, m.id) for m in lost)
        assert {m.fields["n"] for m in claimed} == {m.fields["n"] for m in lost}
        for p in topic.partitions:
            consumers = {c["name"]: c["pending"] for c in client.xinfo_consumers(p.key, "g")}
            assert consumers == {"dead": 0, "alive": 4}
        assert alive.ack(claimed) == 12 and alive.pending() == 0
        with pytest.raises(ValueError):
            topic.consumer("g", "x", partitions=[3])
    finally:
        client.close()


def moving_slot(cluster: ClusterNodes, slot: int, source, target):
    """Move ``slot`` with its keys from ``source`` to ``target`` as redis-cli
    does, yielding ``"ask"`` while the slot is open and its keys moved, then
    ``"moved"`` once every primary was told."""
    src, dst = source.client(), target.client()
    src_id, dst_id = source.node_id(), target.node_id()
    assert dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id) == "OK"
    assert src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id) == "OK"
    keys = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100)
    assert keys
    assert src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 10_000,
                               "KEYS", *keys) == "OK"
    yield "ask"
    for node in [target, source] + [n for n in cluster.nodes if n not in (source, target)]:
        assert node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id) == "OK"
    yield "moved"


def test_consuming_goes_on_while_a_partition_moves(cluster):
    client = connect(cluster)
    reader = connect(cluster, 1)
    try:
        topic = Topic(client, "moving", 3)
        topic.create_group("g")
        consumer = Topic(reader, "moving", 3).consumer("g", "c")
        produced = topic.produce_many((f"k{i}", {"n": i}) for i in range(30))
        got = drain([consumer], 30)["c"]
        moving = topic.partitions[0]
        by_port = {n.port: n for n in cluster.nodes}
        source = by_port[int(client.get_node_from_key(moving.key).port)]
        target = next(n for n in cluster.nodes if n is not source)
        counts = {}

        def step(phase: str) -> None:
            batch = [(f"{phase}{i % 10}", {"key": f"{phase}{i % 10}", "n": i}) for i in range(30)]
            before = topic.rerouted
            produced.extend(topic.produce_many(batch))
            assert topic.rerouted > before  # -ASK, then -MOVED: sent again through the client
            produced.append(topic.produce(batch[0][0], {"key": batch[0][0], "n": 30}))
            counts[phase] = len(produced)
            before = consumer.rerouted
            got.extend(drain([consumer], counts[phase] - len(got))["c"])
            assert consumer.rerouted > before

        for phase in moving_slot(cluster, moving.slot, source, target):
            step(phase)
        assert key_slot(moving.key.encode()) == moving.slot
        assert client.get_node_from_key(moving.key).port == target.port
        assert reader.get_node_from_key(moving.key).port == target.port
        delivered = [(m.stream, m.id) for m in got]
        assert len(delivered) == len(set(delivered)) == len(produced) == 92
        assert set(delivered) == set(produced)
        assert consumer.pending() == 0
        assert target.client().xlen(moving.key) == topic.lengths()[0] > 0
        for p in topic.partitions:  # a key's messages in production order
            order = defaultdict(list)
            for _entry_id, fields in client.xrange(p.key):
                order[fields.get("key")].append(int(fields["n"]))
            assert all(ns == sorted(ns) for ns in order.values()), order
        # back where redis-cli put it: the other tests see the cluster as created
        length = client.xlen(moving.key)
        for _ in moving_slot(cluster, moving.slot, target, source):
            pass
        assert source.client().xlen(moving.key) == length
    finally:
        client.close()
        reader.close()


def test_a_plain_client_of_one_server(processes):
    """Every command names one key: a single server (no cluster) works too."""
    port = free_port()
    processes.tidelog(["--port", str(port), "--save", ""], port=port)
    client = redis.Redis(port=port, decode_responses=True)
    try:
        topic = Topic(client, "single", 4)
        assert topic.create_group("g") == 4
        assert list(topic.placement().values()) == [[0, 1, 2, 3]]
        produced = topic.produce_many((f"k{i}", {"n": i}) for i in range(20))
        consumer = topic.consumer("g", "c")
        got = drain([consumer], 20)["c"]
        assert sorted((m.stream, m.id) for m in got) == sorted(produced)
    finally:
        client.close()


def test_asyncio_topic(cluster):
    """AsyncTopic/AsyncConsumer on redis.asyncio's RedisCluster: the same
    exactly-once delivery, a blocking read woken by a produce, and a claim."""
    async def scenario() -> None:
        clients = [redis.asyncio.cluster.RedisCluster(
            host="127.0.0.1", port=cluster.nodes[i].port, decode_responses=True,
            socket_timeout=10) for i in range(3)]
        try:
            topic = AsyncTopic(clients[0], "async-orders", 6)
            assert await topic.create_group("g") == 6
            batch = [(f"k{i % 10}", {"n": i}) for i in range(120)]
            produced = await topic.produce_many(batch)
            produced.append(await topic.produce(None, {"n": "keyless"}))
            assert sum(await topic.lengths()) == 121
            consumers = [AsyncTopic(c, "async-orders", 6).consumer("g", f"c{i}")
                         for i, c in enumerate(clients[1:])]
            got: list[Message] = []
            for turn in range(200):
                consumer = consumers[turn % 2]
                messages = await consumer.read(count=5, block_ms=0)
                assert await consumer.ack(messages) == len(messages)
                got += messages
                if len(got) >= len(produced):
                    break
            assert sorted((m.stream, m.id) for m in got) == sorted(produced)
            assert [c.rerouted for c in consumers] == [0, 0]
            assert await consumers[0].pending() == 0

            # a blocking read on partition 0 (the first in turn) returns what
            # a produce there adds, whether it came before or during the wait
            waiting = asyncio.ensure_future(consumers[0].read(block_ms=5000))
            key = next(f"w{i}" for i in range(1000) if partition_for(f"w{i}", 6) == 0)
            stream, entry = await topic.produce(key, {"n": "late"})
            woke = await waiting
            assert [(m.stream, m.id, m.fields) for m in woke] == [(stream, entry, {"n": "late"})]

            assert await consumers[1].claim(min_idle_ms=0) == [woke[0]._replace(
                fields={"n": "late"})]
            assert await consumers[1].ack(woke) == 1
        finally:
            for c in clients:
                await c.aclose()

    asyncio.run(scenario())


def test_the_docs_example(cluster, capsys):
    """docs/topics.md's example, read from the page, run as written (the port
    moved to the cluster's)."""
    found = [b for b in blocks(DOCS) if b.lang == "python" and b.section == "Example"]
    assert len(found) == 1
    code = found[0].text.replace("port=7000", f"port={cluster.nodes[0].port}")
    namespace: dict = {}
    exec(compile(code, str(DOCS), "exec"), namespace)
    try:
        assert sorted(map(len, namespace["orders"].placement().values())) == [2, 2, 2]
        messages = namespace["messages"]
        items = [m.fields["item"] for m in messages]
        assert sorted(items) == ["book", "flyer", "ink", "pen"]
        assert items.index("book") < items.index("ink")  # customer:42's order
        assert namespace["taken_over"] == []
        assert namespace["worker"].pending() == 0
        assert len(capsys.readouterr().out.splitlines()) == 5
    finally:
        namespace["client"].close()


def test_consuming_goes_on_after_a_primary_is_killed(processes, tmp_path):
    """Six Tidelog nodes, a replica per primary; the primary of partition 0 is
    killed (SIGKILL) once its replica has every message and the group's state:
    the consumer keeps reading the other partitions while the cluster elects
    the replica, then reads partition 0 there, and every message produced
    before and after arrives exactly once."""
    require_cluster_mode()
    nodes = ClusterNodes(processes, tmp_path)
    for _ in range(6):
        nodes.tidelog()
    result = nodes.create(replicas=1)
    assert result.returncode == 0, result.stdout + result.stderr + nodes.diagnostics()
    nodes.wait_agree()
    client = connect(nodes)
    try:
        topic = Topic(client, "failover", 6)
        topic.create_group("g")
        consumer = topic.consumer("g", "c")
        produced = topic.produce_many((f"k{i}", {"n": i}) for i in range(60))
        got = drain([consumer], 60)["c"]
        produced += topic.produce_many((f"k{i}", {"n": i}) for i in range(60, 120))

        by_port = {n.port: n for n in nodes.nodes}
        victim = by_port[int(client.get_node_from_key(topic.keys[0]).port)]
        victim_id = victim.node_id()
        heir = next(n for n in nodes.nodes if n is not victim and n.client().execute_command(
            "ROLE")[0] == "slave" and n.client().execute_command("ROLE")[2] == victim.port)
        mine = topic.placement()[victim.address]

        def state(node) -> list:
            c = node.client()
            c.execute_command("READONLY")
            return [(c.xlen(topic.keys[i]), c.xinfo_groups(topic.keys[i])[0]["last-delivered-id"])
                    for i in mine]

        deadline = time.monotonic() + WAIT_S
        while state(heir) != state(victim):
            assert time.monotonic() < deadline, "the replica did not catch up"
            time.sleep(0.05)
        victim.process.sigkill()

        deadline = time.monotonic() + 60
        while len(got) < len(produced):
            assert time.monotonic() < deadline, (
                f"{len(got)} of {len(produced)} read; {consumer.errors}; "
                f"{client.get_node_from_key(topic.keys[0])}; heir {heir.port}: "
                f"{heir.client().execute_command('CLUSTER', 'NODES')}")
            try:
                messages = consumer.read(count=10, block_ms=0)
            except (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ClusterError,
                    redis.exceptions.ClusterDownError, redis.exceptions.SlotNotCoveredError):
                time.sleep(0.2)  # no primary for those slots yet
                continue
            assert consumer.ack(messages) == len(messages)
            got += messages
        assert consumer.rerouted > 0
        assert client.get_node_from_key(topic.keys[0]).port == heir.port
        assert all(victim_id not in line or "fail" in line for line in heir.client().execute_command(
            "CLUSTER", "NODES").splitlines())

        produced += topic.produce_many((f"k{i}", {"n": i}) for i in range(120, 180))
        got += drain([consumer], 60)["c"]
        delivered = [(m.stream, m.id) for m in got]
        assert len(delivered) == len(set(delivered)) == len(produced) == 180
        assert set(delivered) == set(produced)
        assert consumer.pending() == 0
    finally:
        client.close()


def test_asyncio_consuming_goes_on_after_a_partition_moved(cluster):
    """The asyncio classes after a slot moved (MOVED).  Not while it moves:
    redis-py 8.1's asyncio cluster client sends ASKING and the redirected
    command on two different pooled connections when the target node has
    more than one idle, so the target answers MOVED, the source ASK again,
    until "TTL exhausted" (with redis-server as well; a plain GET shows it)."""
    async def scenario() -> None:
        producer = redis.asyncio.cluster.RedisCluster(
            host="127.0.0.1", port=cluster.nodes[0].port, decode_responses=True, socket_timeout=10)
        reader = redis.asyncio.cluster.RedisCluster(
            host="127.0.0.1", port=cluster.nodes[1].port, decode_responses=True, socket_timeout=10)
        try:
            topic = AsyncTopic(producer, "async-moving", 3)
            await topic.create_group("g")
            consumer = AsyncTopic(reader, "async-moving", 3).consumer("g", "c")
            produced = await topic.produce_many((f"k{i}", {"n": i}) for i in range(30))

            async def drain_all() -> list[Message]:
                got: list[Message] = []
                for _ in range(100):
                    messages = await consumer.read(count=7, block_ms=0)
                    assert await consumer.ack(messages) == len(messages)
                    got += messages
                    if not messages:
                        break
                return got

            got = await drain_all()
            moving = topic.partitions[0]
            by_port = {n.port: n for n in cluster.nodes}
            source = by_port[int(producer.get_node_from_key(moving.key).port)]
            target = next(n for n in cluster.nodes if n is not source)
            for phase in moving_slot(cluster, moving.slot, source, target):
                if phase == "ask":
                    continue
                produced += await topic.produce_many(
                    (f"{phase}{i % 10}", {"n": i}) for i in range(30))
                got += await drain_all()
            assert producer.get_node_from_key(moving.key).port == target.port
            assert reader.get_node_from_key(moving.key).port == target.port
            assert sorted((m.stream, m.id) for m in got) == sorted(produced)
            assert len(got) == 60 and await consumer.pending() == 0
            for _ in moving_slot(cluster, moving.slot, target, source):
                pass
        finally:
            await producer.aclose()
            await reader.aclose()

    asyncio.run(scenario())
