"""Client-side caching in the engine, without sockets: which modifications
reach a tracking client (expiry, eviction, the table's size limit), where its
messages go relative to its replies, and what tracking costs the clients
that do not track (nothing on the command path: they keep the fast dispatch,
and the databases carry no hook until someone tracks)."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.commands.contract import NO_DISPATCH
from tidelog.resp.replies import OK, Push, RawReply, Replies


def inv(*keys: bytes) -> Push:
    return Push([b"invalidate", list(keys)])


def tracker(h: Harness, *options: str, protocol: int = 3):
    client = h.new_client()
    client.protocol = protocol
    assert h("CLIENT", "TRACKING", "ON", *options, client=client) == OK
    return client


def test_only_tracking_clients_leave_the_fast_dispatch():
    h = Harness()
    other = h.new_client()
    assert all(db.on_touch is None for db in h.engine.dbs)
    a = tracker(h)
    assert a.dispatch is NO_DISPATCH and other.dispatch is not NO_DISPATCH
    assert all(db.on_touch is not None for db in h.engine.dbs)
    assert h("CLIENT", "TRACKING", "OFF", client=a) == OK
    assert a.dispatch is other.dispatch
    assert all(db.on_touch is None for db in h.engine.dbs)  # nobody tracks, nothing remembered


def test_the_hook_stays_while_remembered_keys_remain():
    h = Harness()
    a = tracker(h)
    h("GET", "k", client=a)
    h("CLIENT", "TRACKING", "OFF", client=a)
    assert h.engine.dbs[0].on_touch is not None  # k is still in the table (dropped lazily)
    h("SET", "k", "v")
    assert a.inbox == []                          # tracking is off: not told
    assert h.engine.tracking.table.keys == {}
    assert h.engine.dbs[0].on_touch is None


def test_own_write_follows_the_reply_and_noloop_skips_it():
    h = Harness()
    a = tracker(h)
    h("GET", "k", client=a)
    assert h("SET", "k", "v", client=a) == Replies([OK, inv(b"k")])
    assert a.inbox == []
    b = tracker(h, "NOLOOP")
    h("GET", "k", client=b)
    assert h("SET", "k", "w", client=b) == OK
    assert b.inbox == [] and h.engine.tracking.table.keys == {}


def test_lazy_and_active_expiry_invalidate():
    h = Harness()
    a = tracker(h)
    h("SET", "k", "v", "PX", "100")
    h("SET", "j", "v", "PX", "100")
    h("MGET", "k", "j", client=a)
    h.clock.advance(200)
    assert h("GET", "k") is None                  # another client's lookup expires it
    assert a.inbox == [inv(b"k")]
    h.engine.cron()                               # the active cycle expires j
    assert a.inbox == [inv(b"k"), inv(b"j")]


def test_eviction_invalidates():
    h = Harness()
    a = tracker(h)
    h("SET", "k", "v")
    h("GET", "k", client=a)
    h("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    h("CONFIG", "SET", "maxmemory", "1")         # below what the process uses: evict all
    h("SET", "other", "x")
    h("CONFIG", "SET", "maxmemory", "0")
    assert inv(b"k") in a.inbox


def test_table_size_limit_gives_up_the_oldest_keys():
    h = Harness()
    h("CONFIG", "SET", "tracking-table-max-keys", "2")
    a = tracker(h)
    h("GET", "a", client=a)
    h("GET", "b", client=a)
    assert h("GET", "c", client=a) == Replies([None, inv(b"a")])
    assert list(h.engine.tracking.table.keys) == [b"b", b"c"]
    other = tracker(h)
    h("MGET", "d", "e", "f", client=other)        # three more: four must go
    assert a.inbox == [inv(b"b"), inv(b"c")]
    assert list(h.engine.tracking.table.keys) == [b"e", b"f"]


def test_caching_yes_lasts_one_command_or_one_transaction():
    h = Harness()
    a = tracker(h, "OPTIN")
    h("CLIENT", "CACHING", "YES", client=a)
    h("CLIENT", "ID", client=a)                   # CLIENT subcommands keep it
    h("GET", "x", client=a)
    h("GET", "y", client=a)
    assert list(h.engine.tracking.table.keys) == [b"x"]
    h("CLIENT", "CACHING", "YES", client=a)
    h("MULTI", client=a)
    h("GET", "m1", client=a)
    h("GET", "m2", client=a)
    h("EXEC", client=a)
    h("GET", "z", client=a)
    assert list(h.engine.tracking.table.keys) == [b"x", b"m1", b"m2"]


def test_flush_in_a_transaction_and_resp2_null():
    h = Harness()
    a = tracker(h)
    sink = h.new_client()
    h("SUBSCRIBE", "__redis__:invalidate", client=sink)
    tracker(h, "REDIRECT", str(sink.id), protocol=2)
    h("MULTI", client=a)
    h("FLUSHDB", client=a)
    reply = h("EXEC", client=a)
    assert reply == Replies([[OK], Push([b"invalidate", RawReply(b"_\r\n")])])
    assert sink.inbox == [Push([b"message", b"__redis__:invalidate", RawReply(b"$-1\r\n")])]


def test_client_list_flags_and_redir_and_reset():
    h = Harness()
    sink = h.new_client()
    a = tracker(h, "BCAST", "REDIRECT", str(sink.id))
    line = h("CLIENT", "INFO", client=a).text
    assert b" flags=tB " in line and b" redir=%d " % sink.id in line
    h.engine.client_closed(sink)
    h("SET", "k", "v")
    h.engine.tracking.broadcast()
    assert a.inbox == [Push([b"tracking-redir-broken", sink.id])]
    line = h("CLIENT", "INFO", client=a).text
    assert b" flags=tRB " in line
    assert h.engine.tracking.table.prefixes
    h("RESET", client=a)
    assert a.tracking is None and not h.engine.tracking.table.prefixes
    assert b" flags=N " in h("CLIENT", "INFO", client=a).text
    assert b" redir=-1 " in h("CLIENT", "INFO", client=a).text


def test_closed_client_leaves_its_prefixes_and_the_count():
    h = Harness()
    a = tracker(h, "BCAST", "PREFIX", "p", "PREFIX", "q")
    b = tracker(h, "BCAST", "PREFIX", "p")
    assert h.engine.tracking.clients == 2 and sorted(h.engine.tracking.table.prefixes) == [b"p", b"q"]
    h.engine.client_closed(a)
    assert h.engine.tracking.clients == 1 and list(h.engine.tracking.table.prefixes) == [b"p"]
    h("SET", "p1", "x")
    h("SET", "q1", "x")
    h.engine.cron()                                # no scheduler here: the cron broadcasts
    assert b.inbox == [inv(b"p1")]


def test_a_served_blocked_read_is_remembered_again():
    """Redis 7.2+ runs a served blocked command again (through call()), so
    the keys of a served XREAD are remembered (7.0 did not)."""
    h = Harness()
    a = tracker(h)
    assert h("XREAD", "BLOCK", "0", "STREAMS", "s", "$", client=a).__class__.__name__ == "_Blocked"
    assert list(h.engine.tracking.table.keys) == [b"s"]   # remembered when it blocked
    h("XADD", "s", "1-1", "f", "v")
    assert a.inbox[0] == inv(b"s")                        # the XADD told it, then it was served
    assert list(h.engine.tracking.table.keys) == [b"s"]
    h("XADD", "s", "2-1", "f", "v")
    assert a.inbox[-1] == inv(b"s")


def test_an_unknown_command_uses_up_caching_yes():
    h = Harness()
    a = tracker(h, "OPTIN")
    h("CLIENT", "CACHING", "YES", client=a)
    h("CLIENT", "CACHING", client=a)        # a CLIENT arity error keeps it (as in Redis)
    assert a.tracking.caching
    h("NOSUCH", client=a)
    assert not a.tracking.caching
    h("CLIENT", "CACHING", "YES", client=a)
    h("CLIENT", "NOSUCH", client=a)         # an unknown subcommand uses it up
    assert not a.tracking.caching


def test_key_ranges_find_what_acl_keys_finds():
    """The per-command shortcut (plain key-spec ranges) names the same keys
    as the general finder, for every read command of the table and
    argument counts from its arity up."""
    from tidelog.commands import table
    from tidelog.commands.key_specs import acl_keys
    from tidelog.commands.session.tracking import _NEVER, _key_ranges

    specs = [s for spec in table.COMMANDS.values()
             for s in ([spec] if not spec.subcommands else spec.subcommands.values())]
    checked = 0
    for spec in specs:
        ranges = _key_ranges(spec)
        if ranges is _NEVER or ranges is None:
            continue
        for argc in range(abs(spec.arity), abs(spec.arity) + 5):
            argv = [b"%d" % i for i in range(argc)]
            found = []
            for first, lastkey, step in ranges:
                last = first + lastkey if lastkey >= 0 else argc + lastkey
                found += argv[first:min(last, argc - 1) + 1:step]
            assert found == [argv[i] for i, _ in acl_keys(spec, argv)], (spec.name, argc)
            checked += 1
    assert checked > 100
