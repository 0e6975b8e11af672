"""Keyspace notifications without sockets: the ``notify-keyspace-events``
and ``client-output-buffer-limit`` parsers (values and texts checked against
redis-server 7.0.15 by hand and, for the first, in
tests/differential/test_notify_diff.py), and the events of commands newer
than 7.0 (hash field expiry, Redis 7.4 and 8.0), which the differential
tests cannot compare.

https://redis.io/docs/latest/develop/pubsub/keyspace-notifications/ -- for the hash
field commands of 7.4 and 8.0, Redis 8's events: HEXPIRE sends one hdel when a past
deadline deleted fields, else hexpire; HGETEX likewise (hpersist for PERSIST); HSETEX
hset then hexpire, or only hexpired for a past deadline; HGETDEL hdel; then del when
the hash went.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog import errors
from tidelog.clock import FakeClock
from tidelog.config import (
    DEFAULT_BUFFER_LIMITS,
    NOTIFY_ALL,
    BufferLimit,
    Config,
    ConfigError,
    parse_buffer_limits,
    parse_notify_events,
    show_buffer_limits,
    show_notify_events,
)
from tidelog.engine import Engine
from tidelog.resp.replies import ErrorReply, Push


# -- notify-keyspace-events ----------------------------------------------------------------
@pytest.mark.parametrize("given_text, shown", [
    ("KEA", "AKE"), ("Kg", "gK"), ("E$", "$E"), ("Ag", "A"), ("nA", "A"), ("AKEm", "AKEm"),
    ("x", "x"), ("Elgxetdn", "glxetdnE"), ("mn", "nm"), ("KEAnmd", "AKEm"), ("", ""),
    ("t", "t"), ("lK", "lK"), ("Kd", "dK"), ("g$lshzxetd", "A"), ("zhsl$g", "g$lshz"),
])
def test_notify_classes_read_back_as_redis_shows_them(given_text, shown):
    assert show_notify_events(parse_notify_events(given_text)) == shown


@pytest.mark.parametrize("text", ["KEQ", "k", "a", " ", "KE A", "é"])
def test_notify_refuses_unknown_class_characters(text):
    with pytest.raises(ConfigError) as exc:
        parse_notify_events(text)
    assert str(exc.value) == "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."


@settings(max_examples=200)
@given(st.text(alphabet="Ag$lshzxeKEtmdn", max_size=20))
def test_notify_read_back_is_stable(text):
    """Shown, parsed again and shown: the same text (the canonical form is a
    fixed point); 'A' stands for exactly the classes it covers."""
    shown = show_notify_events(parse_notify_events(text))
    assert show_notify_events(parse_notify_events(shown)) == shown
    assert ("A" in shown) == (parse_notify_events(text) & NOTIFY_ALL == NOTIFY_ALL)


# -- client-output-buffer-limit ---------------------------------------------------------
DEFAULT_SHOWN = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


def test_buffer_limits_default():
    config = Config()
    assert config.show("client-output-buffer-limit") == DEFAULT_SHOWN
    assert config["client-output-buffer-limit"]["pubsub"] == BufferLimit(32 << 20, 8 << 20, 60)


@pytest.mark.parametrize("text, shown", [
    ("normal 1mb 0 0", "normal 1048576 0 0"),
    ("pubsub 1mb 512kb 1", "pubsub 1048576 524288 1"),
    ("NORMAL 5 5 5", "normal 5 5 5"),
    ("normal 1 1 1 normal 2 2 2", "normal 2 2 2"),
    ("normal 1k 2K 3", "normal 1000 2000 3"),
    ("replica 1g 1gb 0", "slave 1000000000 1073741824 0"),
    ("slave 1 1 1", "slave 1 1 1"),
    ("normal 1 1 +5", "normal 1 1 5"), ("normal 1 1 05", "normal 1 1 5"),
    ("normal 1 1 -0", "normal 1 1 0"), ("normal 1b 1B 0", "normal 1 1 0"),
    ("normal 1 1 2147483647", "normal 1 1 2147483647"),
    ("normal 1 1 4294967296", "normal 1 1 0"),  # kept in a C int, as Redis keeps it
    ("normal 18446744073709551615 1 1", "normal 18446744073709551615 1 1"),
    ("normal 18446744073709551616 1 1", "normal 18446744073709551615 1 1"),
    ("normal 20000000000000000000k 1 1", "normal 18446744073709550616 1 1"),
])
def test_buffer_limits_parse_as_redis(text, shown):
    limits = parse_buffer_limits(text)
    out = show_buffer_limits(limits)
    cls = shown.split()[0]
    assert f"{cls} {' '.join(shown.split()[1:])}" in out
    for other in ("normal", "slave", "pubsub"):  # the classes not named keep their values
        if other not in text.lower() and not (other == "slave" and "replica" in text):
            assert limits[other] == DEFAULT_BUFFER_LIMITS[other]


@pytest.mark.parametrize("text, why", [
    ("normal 1mb", errors.CONFIG_BUFFER_LIMIT_ARGS),
    ("normal 0 0 0 pubsub 1 2", errors.CONFIG_BUFFER_LIMIT_ARGS),
    ("foo 1 1 1", errors.CONFIG_BUFFER_LIMIT_CLASS),
    ("master 1 1 1", errors.CONFIG_BUFFER_LIMIT_CLASS),
    ("normal x 1 1", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal 1 x 1", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal 1 1 -1", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal 1 1 x", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal -1 0 0", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal 1 1 5x", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal 1 1 2147483648", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal 1 1 999999999999", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal 1 1 99999999999999999999", errors.CONFIG_BUFFER_LIMIT_VALUE),
    ("normal k 1 1", errors.CONFIG_BUFFER_LIMIT_VALUE),
])
def test_buffer_limits_refused_with_redis_texts(text, why):
    with pytest.raises(ConfigError) as exc:
        parse_buffer_limits(text)
    assert str(exc.value) == why


def test_buffer_limits_config_set_is_all_or_nothing():
    engine = Engine(Config())
    client = engine.new_client()

    def run(*argv: str):
        return engine.execute(client, [a.encode() for a in argv])

    assert run("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 1") is not None
    reply = run("CONFIG", "SET", "client-output-buffer-limit", "normal 1 1 1 foo 1 1 1")
    assert isinstance(reply, ErrorReply)
    assert reply.message == (b"ERR CONFIG SET failed (possibly related to argument "
                             b"'client-output-buffer-limit') - Invalid client class specified "
                             b"in buffer limit configuration.")
    assert engine.config.show("client-output-buffer-limit") == (
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 1")


def test_buffer_limits_in_a_config_file():
    config = Config()
    config.load_text("client-output-buffer-limit normal 1mb 2mb 3\n"
                     "client-output-buffer-limit pubsub 4 5 6\n")
    assert config.show("client-output-buffer-limit") == (
        "normal 1048576 2097152 3 slave 268435456 67108864 60 pubsub 4 5 6")


# -- events of commands newer than 7.0 --------------------------------------------------
class World:
    """An engine with a watcher subscribed to every event, and a client."""

    def __init__(self, classes: str = "KEA") -> None:
        self.clock = FakeClock()
        self.engine = Engine(Config(), clock=self.clock)
        self.engine.config.set("notify-keyspace-events", classes)
        self.engine.set_notify(self.engine.config["notify-keyspace-events"])
        self.inbox: list[Push] = []
        watcher = self.engine.new_client()
        watcher.send = self.inbox.append
        self.engine.execute(watcher, [b"PSUBSCRIBE", b"__keyevent@*"])
        self.client = self.engine.new_client()

    def run(self, *argv: str):
        return self.engine.execute(self.client, [a.encode() for a in argv])

    def events(self) -> list[tuple[bytes, bytes]]:
        """(event, key) received since the last call."""
        got = [(p.items[2].split(b":", 1)[1], p.items[3]) for p in self.inbox]
        self.inbox.clear()
        return got


def test_nothing_is_published_while_off():
    world = World("")
    assert world.engine.notify_flags == 0
    world.run("SET", "a", "1")
    assert world.events() == []
    world = World("A")  # classes, but neither K nor E
    assert world.engine.notify_flags == 0


def test_hexpire_hpersist_and_field_expiry():
    world = World()
    world.run("HSET", "h", "a", "1", "b", "2", "c", "3")
    world.events()
    world.run("HEXPIRE", "h", "100", "FIELDS", "1", "a")
    world.run("HEXPIRE", "h", "100", "FIELDS", "1", "nofield")
    world.run("HPERSIST", "h", "FIELDS", "1", "a")
    world.run("HPERSIST", "h", "FIELDS", "1", "a")
    assert world.events() == [(b"hexpire", b"h"), (b"hpersist", b"h")]
    world.run("HPEXPIRE", "h", "10", "FIELDS", "1", "b")
    world.events()
    world.clock.advance(20)
    world.run("HGET", "h", "b")  # lazy field expiry
    assert world.events() == [(b"hexpired", b"h")]
    world.run("HPEXPIRE", "h", "10", "FIELDS", "2", "a", "c")
    world.events()
    world.clock.advance(20)
    world.engine.cron()  # active field expiry: the hash goes with its last fields
    assert world.events() == [(b"hexpired", b"h"), (b"del", b"h")]


def test_hexpire_in_the_past_deletes():
    world = World()
    world.run("HSET", "h", "a", "1")
    world.events()
    world.run("HEXPIREAT", "h", "1", "FIELDS", "1", "a")
    assert world.events() == [(b"hdel", b"h"), (b"del", b"h")]
    world.run("HSET", "h", "a", "1", "b", "2")
    world.events()
    world.run("HEXPIRE", "h", "100", "FIELDS", "1", "a")
    world.run("HPEXPIREAT", "h", "1", "FIELDS", "2", "a", "nofield")
    assert world.events() == [(b"hexpire", b"h"), (b"hdel", b"h")]
    world.run("HGETEX", "h", "PXAT", "1", "FIELDS", "1", "b")
    assert world.events() == [(b"hdel", b"h"), (b"del", b"h")]
    world.run("HSETEX", "h", "PXAT", "1", "FIELDS", "1", "a", "1")
    assert world.events() == [(b"hexpired", b"h"), (b"del", b"h")]
    world.run("HSETEX", "h", "FIELDS", "1", "a", "1")
    assert world.events() == [(b"hset", b"h")]


def test_hgetdel_hsetex_hgetex():
    world = World()
    world.run("HSETEX", "h", "EX", "100", "FIELDS", "2", "a", "1", "b", "2")
    assert world.events() == [(b"hset", b"h"), (b"hexpire", b"h")]
    world.run("HGETEX", "h", "PERSIST", "FIELDS", "1", "a")
    assert world.events() == [(b"hpersist", b"h")]
    world.run("HGETDEL", "h", "FIELDS", "1", "a")
    world.run("HGETDEL", "h", "FIELDS", "1", "b")
    assert world.events() == [(b"hdel", b"h"), (b"hdel", b"h"), (b"del", b"h")]


def test_pipelined_xadd_run_sends_one_event_each():
    world = World("Et")
    client = world.client
    world.run("XADD", "s", "*", "f", "v")  # the dispatch learns the name
    replies = world.engine.execute_run(client, [[b"XADD", b"s", b"*", b"f", b"v"]] * 3)
    assert len(replies) == 3
    assert world.events() == [(b"xadd", b"s")] * 4


def test_xadd_trims_after_adding():
    world = World("Et")
    world.run("XADD", "s", "1-1", "f", "v")
    world.run("XADD", "s", "MAXLEN", "1", "2-1", "f", "v")
    world.run("XADD", "s", "MAXLEN", "5", "3-1", "f", "v")
    assert world.events() == [(b"xadd", b"s"), (b"xadd", b"s"), (b"xtrim", b"s"),
                              (b"xadd", b"s")]


def test_evicted_hook():
    """Eviction itself comes later; its event goes through the same call."""
    world = World("Ee")
    world.engine.notify_keyspace(1 << 9, b"evicted", b"k", 0)
    assert world.events() == [(b"evicted", b"k")]


# -- Redis 8.8's subkey channels (S, T, I, V) ----------------------------------------------
# https://redis.io/docs/latest/develop/pubsub/subkeyspace-notifications/ -- the four
# channels and payloads, the length-prefixed subkeys, the '|' and newline safeguards,
# and which hash commands send which fields.
@pytest.mark.parametrize("given_text, shown", [
    ("KEASTIV", "AKESTIV"), ("VITS", "STIV"), ("hS", "hS"), ("ST", "ST"), ("EmV", "EmV"),
])
def test_subkey_channel_flags_read_back(given_text, shown):
    assert show_notify_events(parse_notify_events(given_text)) == shown


class SubkeyWorld(World):
    """A watcher subscribed to every subkey channel of db 0."""

    def __init__(self, classes: str = "hSTIV") -> None:
        super().__init__(classes)
        self.engine.execute(self._watcher(), [b"PSUBSCRIBE", b"__subkey*"])

    def _watcher(self):
        watcher = self.engine.new_client()
        watcher.send = self.inbox.append
        return watcher

    def messages(self) -> list[tuple[bytes, bytes]]:
        """(channel, payload) of the subkey channels since the last call."""
        got = [(p.items[2], p.items[3]) for p in self.inbox
               if p.items[2].startswith(b"__subkey")]
        self.inbox.clear()
        return got


def test_subkey_channels_carry_the_fields():
    world = SubkeyWorld()
    assert world.engine.notify_flags  # S, T, I, V alone publish (no K or E needed)
    world.run("HSET", "h", "f1", "v", "field,2", "w")
    assert world.messages() == [
        (b"__subkeyspace@0__:h", b"hset|2:f1,7:field,2"),
        (b"__subkeyevent@0__:hset", b"1:h|2:f1,7:field,2"),
        (b"__subkeyspaceitem@0__:h\nf1", b"hset"),
        (b"__subkeyspaceitem@0__:h\nfield,2", b"hset"),
        (b"__subkeyspaceevent@0__:hset|h", b"2:f1,7:field,2"),
    ]


def test_subkey_events_of_each_hash_command():
    world = SubkeyWorld("hST")

    def space() -> list[bytes]:
        return [m for c, m in world.messages() if c.startswith(b"__subkeyspace@")]

    world.run("HSET", "h", "a", "1", "b", "2", "c", "3")
    world.messages()
    world.run("HSETNX", "h", "a", "9")  # not set: no event
    world.run("HSETNX", "h", "d", "4")
    world.run("HDEL", "h", "d", "nofield")
    world.run("HINCRBY", "h", "a", "2")
    world.run("HINCRBYFLOAT", "h", "a", "0.5")
    assert space() == [b"hset|1:d", b"hdel|1:d", b"hincrby|1:a", b"hincrbyfloat|1:a"]
    world.run("HEXPIRE", "h", "100", "FIELDS", "3", "a", "b", "nofield")
    world.run("HPERSIST", "h", "FIELDS", "2", "b", "c")
    world.run("HGETEX", "h", "PERSIST", "FIELDS", "1", "a")
    world.run("HGETDEL", "h", "FIELDS", "2", "c", "nofield")
    assert space() == [b"hexpire|1:a,1:b", b"hpersist|1:b", b"hpersist|1:a", b"hdel|1:c"]
    world.run("HSETEX", "h", "PX", "10", "FIELDS", "1", "e", "5")
    assert space() == [b"hset|1:e", b"hexpire|1:e"]
    world.clock.advance(20)
    world.engine.cron()  # active field expiry: one hexpired with the fields
    assert space() == [b"hexpired|1:e"]
    world.run("SET", "s", "1")  # no subkeys: nothing on the subkey channels
    world.run("DEL", "h")
    assert world.messages() == []


def test_subkey_safeguards_and_classes():
    world = SubkeyWorld("hI")
    world.run("HSET", "a\nb", "f", "v")  # newline in the key: no item channel
    assert world.messages() == []
    world = SubkeyWorld("STIV")  # no hash class: hash events are not sent
    world.run("HSET", "h", "f", "v")
    assert world.messages() == []
