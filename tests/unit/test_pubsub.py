"""The Pub/Sub registry (tidelog.types.pubsub) alone and against a model of
sets, and the Pub/Sub commands on an engine: who receives what, the counts,
subscribed mode, RESET and closing, and that PUBLISH propagates nothing."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.support.engine_harness import Harness
from tidelog.glob import glob_match
from tidelog.resp.replies import Push, Replies
from tidelog.types.pubsub import CHANNEL, PATTERN, SHARD, PubSub


def test_registry_subscribe_and_unsubscribe():
    reg = PubSub(glob_match)
    subs = reg.subscribe("c1", CHANNEL, b"a")
    assert subs.count() == 1 and reg.of("c1") is subs
    reg.subscribe("c1", CHANNEL, b"a")                 # again: nothing changes
    reg.subscribe("c1", PATTERN, b"a*")
    reg.subscribe("c1", SHARD, b"a")
    assert (subs.count(), subs.total()) == (2, 3)
    reg.subscribe("c2", CHANNEL, b"a")
    assert reg.numsub(CHANNEL, b"a") == 2 and reg.numsub(SHARD, b"a") == 1
    assert reg.numpat() == 1
    assert reg.unsubscribe("c1", CHANNEL, b"nope") is subs
    assert reg.unsubscribe("c1", CHANNEL, b"a") is subs
    assert reg.unsubscribe("c1", PATTERN, b"a*") is subs
    assert reg.patterns == {} and reg.numpat() == 0
    assert reg.unsubscribe("c1", SHARD, b"a") is None   # the last one: no record left
    assert reg.of("c1") is None and reg.shard_channels == {}
    assert reg.channels == {b"a": {"c2": None}}
    assert reg.unsubscribe("c9", CHANNEL, b"a") is None


def test_registry_receivers_in_subscription_order():
    reg = PubSub(glob_match)
    for client in ("x", "y", "z"):
        reg.subscribe(client, CHANNEL, b"news")
    reg.subscribe("y", PATTERN, b"n*")
    reg.subscribe("x", PATTERN, b"n*")
    reg.subscribe("z", PATTERN, b"*s")
    reg.subscribe("z", PATTERN, b"x*")
    direct, by_pattern = reg.receivers(b"news")
    assert direct == ["x", "y", "z"]
    assert by_pattern == [(b"n*", "y"), (b"n*", "x"), (b"*s", "z")]
    assert reg.receivers(b"other") == ([], [])
    reg.subscribe("x", SHARD, b"news")
    assert reg.shard_receivers(b"news") == ["x"]
    assert reg.shard_receivers(b"none") == []
    assert sorted(reg.active(PATTERN, None)) == [b"*s", b"n*", b"x*"]
    assert reg.active(CHANNEL, b"n?ws") == [b"news"]
    assert reg.active(SHARD, b"x") == []


def test_registry_drop():
    reg = PubSub(glob_match)
    reg.subscribe("a", CHANNEL, b"c")
    reg.subscribe("a", PATTERN, b"p")
    reg.subscribe("a", SHARD, b"s")
    reg.subscribe("b", CHANNEL, b"c")
    reg.drop("a")
    reg.drop("a")                                   # twice: nothing
    assert reg.channels == {b"c": {"b": None}} and reg.patterns == {} and reg.shard_channels == {}
    assert reg.names("a", CHANNEL) == [] and reg.names("b", CHANNEL) == [b"c"]


class RegistryModel(RuleBasedStateMachine):
    """Random (un)subscriptions and drops against a set of triples."""

    clients = st.sampled_from(["a", "b", "c"])
    kinds = st.sampled_from([CHANNEL, PATTERN, SHARD])
    names = st.sampled_from([b"", b"x", b"y", b"x*", b"?"])

    def __init__(self) -> None:
        super().__init__()
        self.reg = PubSub(glob_match)
        self.model: set[tuple[str, int, bytes]] = set()

    @rule(client=clients, kind=kinds, name=names)
    def subscribe(self, client, kind, name):
        self.reg.subscribe(client, kind, name)
        self.model.add((client, kind, name))

    @rule(client=clients, kind=kinds, name=names)
    def unsubscribe(self, client, kind, name):
        self.reg.unsubscribe(client, kind, name)
        self.model.discard((client, kind, name))

    @rule(client=clients)
    def drop(self, client):
        self.reg.drop(client)
        self.model = {t for t in self.model if t[0] != client}

    @invariant()
    def same_as_model(self):
        from_tables = {(c, kind, name) for kind, table in enumerate(self.reg.tables)
                       for name, subscribers in table.items() for c in subscribers}
        from_clients = {(c, kind, name) for c, subs in self.reg.by_subscriber.items()
                        for kind, names in enumerate(subs.kinds) for name in names}
        assert from_tables == from_clients == self.model
        assert all(table[name] for table in self.reg.tables for name in table)  # no empty sets
        assert all(subs.total() for subs in self.reg.by_subscriber.values())


TestRegistryModel = RegistryModel.TestCase
TestRegistryModel.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


# -- the commands on an engine -----------------------------------------------------------
def test_publish_reaches_subscribers_and_counts_each_receiver():
    h = Harness()
    sub, other = h.new_client(), h.new_client()
    assert h("SUBSCRIBE", "ch", client=sub) == Push([b"subscribe", b"ch", 1])
    assert h("PSUBSCRIBE", "c*", client=sub) == Push([b"psubscribe", b"c*", 2])
    h("SUBSCRIBE", "ch", client=other)
    assert h("PUBLISH", "ch", "m") == 3
    assert sub.inbox == [Push([b"message", b"ch", b"m"]), Push([b"pmessage", b"c*", b"ch", b"m"])]
    assert other.inbox == [Push([b"message", b"ch", b"m"])]
    assert h("SPUBLISH", "ch", "m") == 0
    assert h.take_effects() == []                   # PUBLISH goes to no AOF


def test_several_names_answer_several_replies():
    h = Harness()
    c = h.new_client()
    assert h("SUBSCRIBE", "a", "b", client=c) == Replies(
        [Push([b"subscribe", b"a", 1]), Push([b"subscribe", b"b", 2])])
    assert h("UNSUBSCRIBE", client=c) == Replies(
        [Push([b"unsubscribe", b"a", 1]), Push([b"unsubscribe", b"b", 0])])
    assert c.pubsub is None
    assert h("UNSUBSCRIBE", client=c) == Push([b"unsubscribe", None, 0])


def test_subscribed_mode_and_reset():
    h = Harness()
    c = h.new_client()
    h("SSUBSCRIBE", "s", client=c)
    assert h.err("GET", "k", client=c).startswith(b"ERR Can't execute 'get'")
    assert h("PING", client=c) == Push([b"pong", b""])
    c.protocol = 3
    assert h("GET", "k", client=c) is None           # RESP3: anything goes
    assert h("PING", client=c).text == b"PONG"
    h("RESET", client=c)
    assert c.pubsub is None and h.engine.pubsub.shard_channels == {}


def test_closing_drops_subscriptions():
    h = Harness()
    c = h.new_client()
    h("SUBSCRIBE", "a", client=c)
    h("PSUBSCRIBE", "*", client=c)
    h.engine.client_closed(c)
    assert h("PUBLISH", "a", "m") == 0
    assert h.engine.pubsub.by_subscriber == {}


def test_empty_channel_matches_only_the_empty_pattern():
    h = Harness()
    star, empty = h.new_client(), h.new_client()
    h("PSUBSCRIBE", "*", client=star)
    h("PSUBSCRIBE", "", client=empty)
    assert h("PUBLISH", "", "m") == 1
    assert empty.inbox and not star.inbox
