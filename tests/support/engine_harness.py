"""Engine harnesses for the unit tests: an engine with a fake clock, one
default client and captured effects (``Harness``), plus consumer-group
helpers (``GroupHarness``) and the effect forms the tests expect."""

from __future__ import annotations

from tidelog.clock import FakeClock
from tidelog.commands.effects import Effect, argv_of
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.resp.replies import ErrorReply
from tidelog.types.groups import ConsumerGroup
from tidelog.types.stream import Stream

NOW = 1_700_000_000_000
U64 = 2**64 - 1


def b(arg) -> bytes:
    return arg if isinstance(arg, bytes) else str(arg).encode()


class Harness:
    """An engine with a fake clock, one default client, and captured effects."""

    def __init__(self, node_entries: int = 100, node_bytes: int = 0,
                 layers: bool = False) -> None:
        """``layers``: attach the durability and replication layers, as the
        server does (SAVE, DEBUG RELOAD, REPLCONF, PSYNC, WAIT need them)."""
        config = Config()
        config.set("stream-node-max-entries", str(node_entries))
        config.set("stream-node-max-bytes", str(node_bytes))
        self.clock = FakeClock(NOW)
        self.engine = Engine(config, clock=self.clock)
        self.client = self.engine.new_client()
        # Each batch the listeners got, with every effect as its Redis 8
        # argv form; ``records`` keeps them as they came (typed records).
        self.effects: list[list[tuple[int, list[bytes]]]] = []
        self.records: list[list[tuple[int, Effect]]] = []
        self.engine.effect_listeners.append(self._listen)
        if layers:
            from tidelog.persistence.durability import attach as attach_durability
            from tidelog.replication.primary import attach as attach_primary

            attach_durability(self.engine)
            attach_primary(self.engine)

    def _listen(self, batch: list[tuple[int, Effect]]) -> None:
        self.records.append(batch)
        self.effects.append([(db, argv_of(effect)) for db, effect in batch])

    def new_client(self, **attrs):
        client = self.engine.new_client(**attrs)
        client.inbox = []  # type: ignore[attr-defined]
        client.send = client.inbox.append  # type: ignore[attr-defined]
        return client

    def __call__(self, *argv, client=None):
        return self.engine.execute(client or self.client, [b(a) for a in argv])

    def ok(self, *argv, client=None):
        reply = self(*argv, client=client)
        assert not isinstance(reply, ErrorReply), reply
        return reply

    def err(self, *argv, client=None) -> bytes:
        reply = self(*argv, client=client)
        assert isinstance(reply, ErrorReply), reply
        return reply.message

    def take_effects(self) -> list[list[bytes]]:
        """Every effect argv since the last call, flattened."""
        out = [argv for batch in self.effects for _, argv in batch]
        self.effects.clear()
        self.records.clear()
        return out

    def take_records(self) -> list[Effect]:
        """Every effect since the last call as it came (argv list or record), flattened."""
        out = [effect for batch in self.records for _, effect in batch]
        self.effects.clear()
        self.records.clear()
        return out

    def stream(self, key=b"s") -> Stream:
        value = self.engine.dbs[0].data[b(key)]
        assert isinstance(value, Stream)
        value.check()
        return value


def entry(id, *fv):
    return [b(id), [b(x) for x in fv]]


class GroupHarness(Harness):
    def group(self, name=b"g", key=b"s") -> ConsumerGroup:
        group = self.stream(key).groups[b(name)]
        group.check()
        return group

    def info_groups(self, key="s") -> dict[bytes, dict[bytes, object]]:
        return {dict(m.items)[b"name"]: dict(m.items) for m in self.ok("XINFO", "GROUPS", key)}

    def consumers(self, key="s", group="g") -> dict[bytes, dict[bytes, object]]:
        return {dict(m.items)[b"name"]: dict(m.items)
                for m in self.ok("XINFO", "CONSUMERS", key, group)}


def fill(h, n, key="s", start=1):
    for i in range(start, start + n):
        h.ok("XADD", key, f"{i}-1", "f", str(i))


def ids(entries) -> list[bytes]:
    return [e[0] for e in entries]


def setid_effect(last_id, entries_read, key=b"s", group=b"g"):
    return [b"XGROUP", b"SETID", key, group, b(last_id), b"ENTRIESREAD", b(entries_read)]


def xclaim_effect(id, consumer, time, count, last_id, key=b"s", group=b"g"):
    return [b"XCLAIM", key, group, b(consumer), b"0", b(id), b"TIME", b(time),
            b"RETRYCOUNT", b(count), b"FORCE", b"JUSTID", b"LASTID", b(last_id)]


# -- consumer groups: PEL, state and replay --------------------------------------------
LLONG_MAX = 2**63 - 1


def pel(h, group="g", key="s"):
    """``[(id, owner or None, delivery time, count)]`` in ID order."""
    g = h.group(group, key)
    return [(bytes(e.id), None if e.consumer is None else e.consumer.name, e.delivery_time,
             e.delivery_count) for e in g.pel.values()]


def xrange_ids(h, key="s"):
    return ids(h.ok("XRANGE", key, "-", "+"))


def read_all(h, consumer, group="g", key="s", count=None):
    extra = ["COUNT", count] if count else []
    return h.ok("XREADGROUP", "GROUP", group, consumer, *extra, "STREAMS", key, ">")


def state(h):
    """Everything the effects must rebuild: entries and every group's PEL,
    position, NACK zone order and consumers with something pending."""
    out = {}
    for key, value in sorted(h.engine.dbs[0].data.items()):
        if not hasattr(value, "groups"):
            continue
        value.check()
        groups = {}
        for name, group in sorted(value.groups.items()):
            group.check()
            nack_order = [bytes(e.id) for e in group.claimable(0, 1 << 62)
                          if e.consumer is None]
            groups[name] = (group.last_id, group.entries_read,
                            [(e.id, None if e.consumer is None else e.consumer.name,
                              e.delivery_count) for e in group.pel.values()],
                            nack_order)
        out[key] = (ids(h.ok("XRANGE", key, "-", "+")), value.length, groups)
    return out


def replay(h) -> GroupHarness:
    """A fresh engine fed everything ``h`` propagated, through an AOF client."""
    replica = GroupHarness()
    replica.clock.set_ms(h.clock.now_ms())
    aof = replica.new_client(kind="aof")
    for argv in h.take_effects():
        replica.ok(*argv, client=aof)
    return replica


def two_groups_reading(h, n=2):
    """Entries 1-0..n-0, groups g1 and g2 each having read all of them."""
    for i in range(1, n + 1):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    for g, c in (("g1", "c1"), ("g2", "c2")):
        h.ok("XGROUP", "CREATE", "s", g, "0")
        read_all(h, c, group=g)
