"""Pub/Sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH,
SPUBLISH and PUBSUB.

The subscriptions live in the engine's registry (``ctx.engine.pubsub``, a
:class:`tidelog.types.pubsub.PubSub`); the client's own record is
``client.pubsub`` (None while it has none: the engine reads that to refuse
other commands to a RESP2 client in subscribed mode).

Replies: each (un)subscribe confirmation is a reply of its own, so a
command naming several channels answers a
:class:`~tidelog.resp.replies.Replies`.  Confirmations and messages are
:class:`~tidelog.resp.replies.Push` values: push frames (``>``) in RESP3,
arrays in RESP2.  A message for another client goes out through that
client's ``send`` callback (the path the engine uses to answer a blocked
client later); for the publisher itself, the network layer puts it before
the PUBLISH reply, as Redis does.

Propagation: Redis sends PUBLISH to replicas and never to the AOF.  Tidelog
has no replication yet and its effects feed the AOF, so PUBLISH and SPUBLISH
propagate nothing (they are not write commands).
"""

from __future__ import annotations

from typing import Any

from ...errors import SSUBSCRIBE_DENY_BLOCKING, CommandError, subcommand_syntax
from ...resp.replies import Push, Replies
from ...types.pubsub import CHANNEL, PATTERN, SHARD
from ..contract import ClientState, Ctx
from ..key_specs import ks
from ..replies import help_command
from ..table import command

_SUBSCRIBE = (b"subscribe", b"psubscribe", b"ssubscribe")
_UNSUBSCRIBE = (b"unsubscribe", b"punsubscribe", b"sunsubscribe")


def _count(client: ClientState, kind: int) -> int:
    """The count a confirmation carries: channels plus patterns, or (shard
    commands) shard channels."""
    subs = client.pubsub
    if subs is None:
        return 0
    return len(subs.kinds[SHARD]) if kind == SHARD else subs.count()


def _one_or_many(replies: list[Any]) -> Any:
    return replies[0] if len(replies) == 1 else Replies(replies)


def _subscribe(ctx: Ctx, names: list[bytes], kind: int) -> Any:
    """O(N) for N names."""
    registry = ctx.engine.pubsub
    client = ctx.client
    word = _SUBSCRIBE[kind]
    replies = []
    for name in names:
        client.pubsub = registry.subscribe(client, kind, name)
        replies.append(Push([word, name, _count(client, kind)]))
    return _one_or_many(replies)


def _unsubscribe(ctx: Ctx, names: list[bytes], kind: int) -> Any:
    """O(N) for N names; with none, every subscription of the kind."""
    registry = ctx.engine.pubsub
    client = ctx.client
    word = _UNSUBSCRIBE[kind]
    if not names:
        names = registry.names(client, kind)
        if not names:
            return Push([word, None, _count(client, kind)])
    replies = []
    for name in names:
        client.pubsub = registry.unsubscribe(client, kind, name)
        replies.append(Push([word, name, _count(client, kind)]))
    return _one_or_many(replies)


@command("subscribe", arity=-2, flags="pubsub noscript loading stale", group="pubsub",
         since="2.0.0", complexity="O(N) where N is the number of channels to subscribe to.",
         summary="Listen for messages published to the given channels")
def subscribe(ctx: Ctx, argv: list[bytes]) -> Any:
    """SUBSCRIBE channel [channel ...]"""
    return _subscribe(ctx, argv[1:], CHANNEL)


@command("psubscribe", arity=-2, flags="pubsub noscript loading stale", group="pubsub",
         since="2.0.0", complexity="O(N) where N is the number of patterns to subscribe to.",
         summary="Listen for messages published to channels matching the given patterns")
def psubscribe(ctx: Ctx, argv: list[bytes]) -> Any:
    """PSUBSCRIBE pattern [pattern ...]"""
    return _subscribe(ctx, argv[1:], PATTERN)


@command("ssubscribe", arity=-2, flags="pubsub noscript loading stale", keys=(1, -1, 1),
         group="pubsub", since="7.0.0",
         complexity="O(N) where N is the number of shard channels to subscribe to.",
         summary="Listen for messages published to the given shard channels",
         key_specs=[ks("not_key", 1, -1)])
def ssubscribe(ctx: Ctx, argv: list[bytes]) -> Any:
    """SSUBSCRIBE shardchannel [shardchannel ...]"""
    if ctx.engine.in_transaction():  # Redis: a client in EXEC may not block
        raise CommandError(SSUBSCRIBE_DENY_BLOCKING)
    return _subscribe(ctx, argv[1:], SHARD)


@command("unsubscribe", arity=-1, flags="pubsub noscript loading stale", group="pubsub",
         since="2.0.0", complexity="O(N) where N is the number of clients already subscribed to a "
         "channel.", summary="Stop listening for messages posted to the given channels")
def unsubscribe(ctx: Ctx, argv: list[bytes]) -> Any:
    """UNSUBSCRIBE [channel [channel ...]]"""
    return _unsubscribe(ctx, argv[1:], CHANNEL)


@command("punsubscribe", arity=-1, flags="pubsub noscript loading stale", group="pubsub",
         since="2.0.0", complexity="O(N+M) where N is the number of patterns the client is already "
         "subscribed and M is the number of total patterns subscribed in the system (by any client).",
         summary="Stop listening for messages posted to channels matching the given patterns")
def punsubscribe(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUNSUBSCRIBE [pattern [pattern ...]]"""
    return _unsubscribe(ctx, argv[1:], PATTERN)


@command("sunsubscribe", arity=-1, flags="pubsub noscript loading stale", keys=(1, -1, 1),
         group="pubsub", since="7.0.0",
         complexity="O(N) where N is the number of clients already subscribed to a shard channel.",
         summary="Stop listening for messages posted to the given shard channels",
         key_specs=[ks("not_key", 1, -1)])
def sunsubscribe(ctx: Ctx, argv: list[bytes]) -> Any:
    """SUNSUBSCRIBE [shardchannel [shardchannel ...]]"""
    return _unsubscribe(ctx, argv[1:], SHARD)


@command("publish", arity=3, flags="pubsub loading stale fast", group="pubsub", since="2.0.0",
         complexity="O(N+M) where N is the number of clients subscribed to the receiving channel "
         "and M is the total number of subscribed patterns (by any client).",
         summary="Post a message to a channel")
def publish(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUBLISH channel message"""
    channel, message = argv[1], argv[2]
    direct, by_pattern = ctx.engine.pubsub.receivers(channel)
    if direct:
        push = Push([b"message", channel, message])
        for client in direct:
            client.send(push)
    for pattern, client in by_pattern:
        client.send(Push([b"pmessage", pattern, channel, message]))
    # To the other nodes over the bus in cluster mode, else to the replicas
    # (their subscribers get it too); never to the AOF, as Redis.
    if not ctx.engine.cluster.propagate_publish(channel, message, False):
        ctx.engine.replication.replicate_only(ctx.db.index, argv)
    return len(direct) + len(by_pattern)


@command("spublish", arity=3, flags="pubsub loading stale fast", keys=(1, 1, 1), group="pubsub",
         since="7.0.0", complexity="O(N) where N is the number of clients subscribed to the "
         "receiving shard channel.", summary="Post a message to a shard channel",
         key_specs=[ks("not_key", 1)])
def spublish(ctx: Ctx, argv: list[bytes]) -> Any:
    """SPUBLISH shardchannel message"""
    channel = argv[1]
    receivers = ctx.engine.pubsub.shard_receivers(channel)
    if receivers:
        push = Push([b"smessage", channel, argv[2]])
        for client in receivers:
            client.send(push)
    if not ctx.engine.cluster.propagate_publish(channel, argv[2], True):
        ctx.engine.replication.replicate_only(ctx.db.index, argv)
    return len(receivers)


# -- PUBSUB --------------------------------------------------------------------------
@command("pubsub", arity=-2, group="pubsub", since="2.8.0", complexity="Depends on subcommand.",
         summary="A container for Pub/Sub commands", container=True,
         categories=("-@pubsub",), help=(
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
))
def pubsub(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUBSUB <subcommand> [<arg> [value] [opt] ...]"""


def _active(ctx: Ctx, argv: list[bytes], kind: int) -> list[bytes]:
    if len(argv) > 3:
        raise subcommand_syntax(argv[1], argv[0])
    return ctx.engine.pubsub.active(kind, argv[2] if len(argv) == 3 else None)


@command("pubsub|channels", arity=-2, flags="pubsub loading stale", group="pubsub",
         since="2.8.0", complexity="O(N) where N is the number of active channels, and assuming "
         "constant time pattern matching (relatively short channels and patterns)",
         summary="List active channels")
def pubsub_channels(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUBSUB CHANNELS [pattern]"""
    return _active(ctx, argv, CHANNEL)


@command("pubsub|shardchannels", arity=-2, flags="pubsub loading stale", group="pubsub",
         since="7.0.0", complexity="O(N) where N is the number of active shard channels, and "
         "assuming constant time pattern matching (relatively short shard channels).",
         summary="List active shard channels")
def pubsub_shardchannels(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUBSUB SHARDCHANNELS [pattern]"""
    return _active(ctx, argv, SHARD)


def _numsub(ctx: Ctx, argv: list[bytes], kind: int) -> list[Any]:
    registry = ctx.engine.pubsub
    reply: list[Any] = []
    for name in argv[2:]:
        reply += (name, registry.numsub(kind, name))
    return reply


@command("pubsub|numsub", arity=-2, flags="pubsub loading stale", group="pubsub",
         since="2.8.0", complexity="O(N) for the NUMSUB subcommand, where N is the number of "
         "requested channels", summary="Get the count of subscribers for channels")
def pubsub_numsub(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUBSUB NUMSUB [channel [channel ...]]"""
    return _numsub(ctx, argv, CHANNEL)


@command("pubsub|shardnumsub", arity=-2, flags="pubsub loading stale", group="pubsub",
         since="7.0.0", complexity="O(N) for the SHARDNUMSUB subcommand, where N is the number "
         "of requested shard channels", summary="Get the count of subscribers for shard channels")
def pubsub_shardnumsub(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUBSUB SHARDNUMSUB [shardchannel [shardchannel ...]]"""
    return _numsub(ctx, argv, SHARD)


@command("pubsub|numpat", arity=2, flags="pubsub loading stale", group="pubsub",
         since="2.8.0", complexity="O(1)", summary="Get the count of unique patterns pattern "
         "subscriptions")
def pubsub_numpat(ctx: Ctx, argv: list[bytes]) -> Any:
    """PUBSUB NUMPAT"""
    return ctx.engine.pubsub.numpat()


help_command("pubsub", group="pubsub", since="6.2.0",
             summary="Show helpful text about the different subcommands", categories=("-@pubsub",))
