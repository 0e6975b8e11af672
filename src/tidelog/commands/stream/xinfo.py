"""XINFO: STREAM (summary or FULL), GROUPS, CONSUMERS.

``radix-tree-nodes`` differs in kind from Redis's: there is no radix tree
here; the number is that of an ideal radix tree over the node keys (see
:func:`radix_tree_nodes`), which has equalled Redis's in every sequence
tried (appends, XDEL, XTRIM); the differential tests still normalise it.
Consumer fields follow Redis 7.2 (``inactive``, ``active-time``).
"""

from __future__ import annotations

from typing import Any

from ... import errors
from ...errors import CommandError
from ...ids import MAX_ID, MIN_ID
from ...resp.replies import Map
from ...types.groups import UNKNOWN, ConsumerGroup
from ...types.stream import Stream
from ..args import ArgReader
from ..contract import Ctx
from ..key_specs import ND
from ..lookup import lookup_read_typed
from ..replies import help_command
from ..table import command
from .entries import entries_reply, entry_reply
from .idmp import info_fields as idmp_info_fields

XINFO_FULL_DEFAULT_COUNT = 10


# -- XINFO ------------------------------------------------------------------------------

@command("xinfo", arity=-2, group="stream", since="5.0.0", complexity="Depends on subcommand.",
         summary="A container for stream introspection commands.", container=True, help=(
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
))
def xinfo(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO subcommand [argument ...]"""


def _xinfo_stream(ctx: Ctx, key: bytes) -> Stream:
    stream = lookup_read_typed(ctx, key, Stream)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    return stream


def radix_tree_nodes(stream: Stream) -> int:
    """XINFO's ``radix-tree-nodes``: the nodes of an ideal radix tree over the node keys.

    Redis keeps its node keys (16-byte big-endian IDs) in a radix tree and
    reports its node count.  We keep them in a sorted list, so we count the
    nodes a compressed radix tree over the same keys has: the root, every
    key, every prefix where keys branch, and every child of such a prefix.
    Equal to Redis's count in every sequence tried (appends, XDEL, XTRIM),
    but not proven equal after every possible history of removals.

    Cost: O(K) for K nodes (16 bytes each).
    """
    keys = [id.ms.to_bytes(8, "big") + id.seq.to_bytes(8, "big") for id, _ in stream.nodes()]
    found = {b""}
    found.update(keys)
    for a, b in zip(keys, keys[1:]):
        common = 0
        while a[common] == b[common]:
            common += 1
        found.add(a[:common])
        found.add(a[:common + 1])
        found.add(b[:common + 1])
    return len(found)


def _stream_head(ctx: Ctx, stream: Stream) -> list[tuple[bytes, Any]]:
    """The fields XINFO STREAM starts with, FULL or not (IDMP's from Redis 8.6)."""
    return [
        (b"length", stream.length),
        (b"radix-tree-keys", stream.node_count),
        (b"radix-tree-nodes", radix_tree_nodes(stream)),
        (b"last-generated-id", bytes(stream.last_id)),
        (b"max-deleted-entry-id", bytes(stream.max_deleted_entry_id)),
        (b"entries-added", stream.entries_added),
        (b"recorded-first-entry-id", bytes(stream.first_id)),
        *idmp_info_fields(ctx, stream),
    ]


def _entries_read(group: ConsumerGroup) -> int | None:
    return None if group.entries_read == UNKNOWN else group.entries_read


def _full_group(group: ConsumerGroup, stream: Stream, count: int) -> Map:
    """One group of XINFO STREAM FULL; ``count`` bounds each PEL shown (0: all)."""
    pending: list[list[Any]] = []
    for entry in group.pending_range(MIN_ID, MAX_ID):
        if count and len(pending) >= count:
            break
        owner = entry.consumer.name if entry.consumer is not None else b""
        pending.append([bytes(entry.id), owner, entry.delivery_time, entry.delivery_count])
    consumers = []
    for consumer in group.consumers.values():
        own: list[list[Any]] = []
        for entry in consumer.pel.values():
            if count and len(own) >= count:
                break
            own.append([bytes(entry.id), entry.delivery_time, entry.delivery_count])
        consumers.append(Map([
            (b"name", consumer.name),
            (b"seen-time", consumer.seen_time),
            (b"active-time", consumer.active_time),  # Redis 7.2
            (b"pel-count", len(consumer.pel)),
            (b"pending", own),
        ]))
    return Map([
        (b"name", group.name),
        (b"last-delivered-id", bytes(group.last_id)),
        (b"entries-read", _entries_read(group)),
        (b"lag", group.lag(stream)),
        (b"pel-count", len(group.pel)),
        (b"pending", pending),
        (b"consumers", consumers),
        (b"nacked-count", group.nacked_count),  # Redis 8.8
    ])


@command("xinfo|stream", arity=-3, flags="readonly", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(log N) for the summary (plus the node count); FULL: O(E + G + P) "
                    "for the E entries, G groups and P pending entries shown.",
         summary="Shows a stream's counters, first and last entries, or (FULL) its "
                 "entries and groups.")
def xinfo_stream(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO STREAM key [FULL [COUNT count]]"""
    stream = _xinfo_stream(ctx, argv[2])  # the key first, then the options
    r = ArgReader(argv, 3)
    if not r.more():
        first = stream.first_entry()
        last = stream.last_entry()
        return Map(_stream_head(ctx, stream) + [
            (b"groups", len(stream.groups)),
            (b"first-entry", entry_reply(*first) if first is not None else None),
            (b"last-entry", entry_reply(*last) if last is not None else None),
        ])
    if r.remaining() not in (1, 3) or r.next_upper() != b"FULL":
        raise errors.subcommand_syntax(argv[1], b"xinfo")
    count = XINFO_FULL_DEFAULT_COUNT
    if r.more():
        if r.next_upper() != b"COUNT":
            raise errors.subcommand_syntax(argv[1], b"xinfo")
        count = r.next_int()
        if count < 0:
            count = XINFO_FULL_DEFAULT_COUNT
    r.finish()
    return Map(_stream_head(ctx, stream) + [
        (b"entries", entries_reply(stream, MIN_ID, MAX_ID, count)),
        (b"groups", [_full_group(group, stream, count)
                     for _, group in sorted(stream.groups.items())]),
    ])


@command("xinfo|groups", arity=3, flags="readonly", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(G) for G groups.",
         summary="Shows the consumer groups of a stream.")
def xinfo_groups(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO GROUPS key"""
    stream = _xinfo_stream(ctx, argv[2])
    return [
        Map([
            (b"name", group.name),
            (b"consumers", len(group.consumers)),
            (b"pending", len(group.pel)),
            (b"last-delivered-id", bytes(group.last_id)),
            (b"entries-read", _entries_read(group)),
            (b"lag", group.lag(stream)),
        ])
        for _, group in sorted(stream.groups.items())
    ]


@command("xinfo|consumers", arity=4, flags="readonly", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(C) for C consumers.",
         summary="Shows the consumers of a group: pending entries, idle and inactive times.",
         tips=(ND,))
def xinfo_consumers(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO CONSUMERS key group"""
    key, name = argv[2], argv[3]
    group = _xinfo_stream(ctx, key).groups.get(name)
    if group is None:
        raise errors.nogroup_for_key(name, key)
    now = ctx.now_ms()
    out = []
    for consumer in group.consumers.values():
        inactive = -1 if consumer.active_time == -1 else max(now - consumer.active_time, 0)
        out.append(Map([
            (b"name", consumer.name),
            (b"pending", len(consumer.pel)),
            (b"idle", max(now - consumer.seen_time, 0)),
            (b"inactive", inactive),  # Redis 7.2
        ]))
    return out


help_command("xinfo", group="stream", since="5.0.0", summary="Shows the XINFO subcommands.")
