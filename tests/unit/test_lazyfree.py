"""Lazy free: UNLINK (and DEL under lazyfree-lazy-user-del) leaves a value
of more than Redis's 64 allocations (its estimate, commands.keys.lazyfree_effort)
to be dropped after the reply; INFO memory counts it in
lazyfree_pending_objects until then and in lazyfreed_objects after (Redis's
lazyfree.tcl "lazy free a stream with all types of metadata" and "lazy free a
stream with deleted cgroup")."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.commands.keys.keys import LAZYFREE_THRESHOLD, lazyfree_effort


class Deferred:
    """The engine's scheduler, run by hand: what was scheduled runs on ``run()``."""

    def __init__(self) -> None:
        self.calls: list = []

    def __call__(self, delay, fn):
        self.calls.append(fn)

    def run(self) -> None:
        calls, self.calls = self.calls, []
        for fn in calls:
            fn()


def info_memory(h: Harness) -> dict[str, str]:
    text = h.ok("INFO", "memory")
    text = text if isinstance(text, bytes) else text.text
    return dict(line.split(":", 1) for line in text.decode().split("\r\n") if ":" in line)


def harness() -> tuple[Harness, Deferred]:
    h = Harness(node_entries=5)
    deferred = Deferred()
    h.engine.schedule = deferred
    return h, deferred


def big_stream(h: Harness) -> None:
    for i in range(1000):
        h.ok("XADD", "stream", "*", "foo" if i % 10 else "bar", str(i))
    h.ok("XGROUP", "CREATE", "stream", "mygroup", "0")
    h.ok("XREADGROUP", "GROUP", "mygroup", "Alice", "COUNT", "2", "STREAMS", "stream", ">")


def test_unlink_frees_a_large_value_after_the_reply():
    h, deferred = harness()
    big_stream(h)
    assert lazyfree_effort(h.engine.dbs[0].data[b"stream"]) > LAZYFREE_THRESHOLD
    assert h("UNLINK", "stream") == 1
    assert h("EXISTS", "stream") == 0
    memory = info_memory(h)
    assert (memory["lazyfree_pending_objects"], memory["lazyfreed_objects"]) == ("1", "0")
    deferred.run()
    memory = info_memory(h)
    assert (memory["lazyfree_pending_objects"], memory["lazyfreed_objects"]) == ("0", "1")
    h.ok("CONFIG", "RESETSTAT")
    assert info_memory(h)["lazyfreed_objects"] == "0"


def test_small_values_and_plain_del_free_at_once():
    h, deferred = harness()
    h.ok("XADD", "s", "*", "a", "b")
    h.ok("XGROUP", "CREATE", "s", "bla", "$")
    h.ok("XGROUP", "DESTROY", "s", "bla")
    h.ok("SET", "str", "x" * 1000)
    h.ok("SADD", "small", *map(str, range(10)))
    assert h("UNLINK", "s", "str", "small") == 3
    big_stream(h)
    assert h("DEL", "stream") == 1  # lazyfree-lazy-user-del no
    assert deferred.calls == [] and h.engine.lazyfree_pending == []
    assert info_memory(h)["lazyfreed_objects"] == "0"


def test_del_is_lazy_under_lazyfree_lazy_user_del():
    h, deferred = harness()
    h.ok("CONFIG", "SET", "lazyfree-lazy-user-del", "yes")
    h.ok("SADD", "big", *map(str, range(1000)))  # past the intset limit: a hashtable
    h.ok("ZADD", "z", *[str(i) for i in range(400)])  # 200 members: a skiplist
    assert h("DEL", "big", "z") == 2
    assert len(h.engine.lazyfree_pending) == 2
    deferred.run()
    assert h.engine.lazyfreed_objects == 2


def test_effort_follows_redis_estimate():
    h, _ = harness()
    big_stream(h)
    stream = h.engine.dbs[0].data[b"stream"]
    # nodes (of 5 entries), plus one group with 2 pending entries
    assert lazyfree_effort(stream) == stream.node_count + 1 * (1 + 2)
    assert lazyfree_effort(b"x" * 100_000) == 1
    h.ok("RPUSH", "l", *[str(i) * 30 for i in range(1000)])  # past 8 KB: a quicklist
    assert lazyfree_effort(h.engine.dbs[0].data[b"l"]) == 1000 // 128 + 1
