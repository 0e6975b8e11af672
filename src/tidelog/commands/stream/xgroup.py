"""XGROUP: create, move, destroy consumer groups and their consumers.

Each subcommand resolves its options, key and group in Redis's order
(:func:`_xgroup_resolve`), then changes the group.  Effects: each goes out
verbatim when it changed something; none of them touches WATCH except
CREATE ... MKSTREAM when it creates the stream (consumer-group changes bump
the dirty counter without ``ctx.modified``, as in Redis).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import errors
from ...config import NOTIFY_STREAM
from ...errors import CommandError
from ...ids import MIN_ID
from ...resp.replies import OK
from ...types.groups import UNKNOWN, ConsumerGroup, clamp_entries_read
from ...types.stream import Stream
from ..args import ArgReader
from ..contract import Ctx
from ..key_specs import ks
from ..replies import help_command
from ..table import command
from .stream_args import (
    parse_id_arg,
    parse_strict_id_arg,
)

# -- XGROUP -----------------------------------------------------------------------------

@command("xgroup", arity=-2, group="stream", since="5.0.0", complexity="Depends on subcommand.",
         summary="A container for consumer groups commands.", container=True, help=(
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
))
def xgroup(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP subcommand [argument ...]"""


@dataclass(slots=True)
class _XGroupTarget:
    """What every XGROUP subcommand but HELP reads and resolves first."""

    subcommand: bytes            # as the client typed it (for the error text)
    key: bytes
    name: bytes                  # the group's
    arg: bytes = b""             # CREATE, SETID: the ID; CREATE/DELCONSUMER: the consumer
    stream: Stream | None = None
    group: ConsumerGroup | None = None
    mkstream: bool = False
    entries_read: int = UNKNOWN
    extra: int = 0               # how many option words followed ``arg``


def _xgroup_resolve(ctx: Ctx, argv: list[bytes], need_group: bool) -> _XGroupTarget:
    """Arguments, key, and group, in Redis's order.

    1. CREATE's MKSTREAM / ENTRIESREAD and SETID's ENTRIESREAD (after the
       ID), each error as met (an unknown word is a syntax error; too many
       arguments are refused by the subcommand, after these checks);
    2. the key's type (WRONGTYPE);
    3. unless MKSTREAM: the key must exist, and SETID, CREATECONSUMER and
       DELCONSUMER need the group.
    """
    r = ArgReader(argv, 1)
    sub = r.next_bytes()
    target = _XGroupTarget(sub, r.next_bytes(), r.next_bytes())
    create = sub.lower() == b"create"
    if r.more():  # all but DESTROY, whose arity stops at the group
        target.arg = r.next_bytes()
    target.extra = r.remaining()
    while r.more():
        opt = r.next_upper()
        if create and opt == b"MKSTREAM":
            target.mkstream = True
        elif opt == b"ENTRIESREAD" and r.more():
            value = r.next_int()
            if value < 0 and value != UNKNOWN:
                raise CommandError(errors.ENTRIESREAD_INVALID)
            target.entries_read = value
        else:
            raise errors.subcommand_syntax(sub, b"xgroup")
    r.finish()
    target.stream = ctx.db.get_stream(target.key)
    if not target.mkstream:
        if target.stream is None:
            raise CommandError(errors.XGROUP_KEY_MISSING)
        target.group = target.stream.groups.get(target.name)
        if need_group and target.group is None:
            raise errors.nogroup_for_key(target.name, target.key)
    return target


@command("xgroup|create", arity=-5, flags="write denyoom", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Creates a consumer group, and the stream too with MKSTREAM.",
         key_specs=[ks("RW insert", 2)])
def xgroup_create(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP CREATE key group <id | $> [MKSTREAM] [ENTRIESREAD entries-read]"""
    target = _xgroup_resolve(ctx, argv, need_group=False)
    if target.extra > 3:  # MKSTREAM and ENTRIESREAD n at most
        raise errors.subcommand_syntax(target.subcommand, b"xgroup")
    stream = target.stream
    if target.arg == b"$":
        last_id = stream.last_id if stream is not None else MIN_ID
    else:
        last_id = parse_strict_id_arg(target.arg)
    if stream is None:  # MKSTREAM, now that nothing can fail
        stream = Stream()
        ctx.db.set(target.key, stream)
        ctx.modified(target.key)
    name = target.name
    if name in stream.groups:
        raise CommandError(errors.BUSYGROUP)
    stream.groups[name] = ConsumerGroup(name, last_id,
                                        clamp_entries_read(target.entries_read, stream))
    ctx.changed(key=target.key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STREAM, b"xgroup-create", target.key)
    return OK


@command("xgroup|setid", arity=-5, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Moves a consumer group's last delivered ID.")
def xgroup_setid(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP SETID key group <id | $> [ENTRIESREAD entries-read]"""
    target = _xgroup_resolve(ctx, argv, need_group=True)
    if target.extra not in (0, 2):  # ENTRIESREAD n, once
        raise errors.subcommand_syntax(target.subcommand, b"xgroup")
    stream, group = target.stream, target.group
    assert stream is not None and group is not None
    new_id = stream.last_id if target.arg == b"$" else parse_id_arg(target.arg)
    entries_read = None if target.entries_read == UNKNOWN else target.entries_read
    group.set_id(new_id, entries_read, stream)
    ctx.changed(key=target.key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STREAM, b"xgroup-setid", target.key)
    return OK


@command("xgroup|destroy", arity=4, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(N) where N is the number of entries in the group's pending entries list.",
         summary="Destroys a consumer group; blocked readers of it get an error.",
         key_specs=[ks("RW delete", 2)])
def xgroup_destroy(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP DESTROY key group"""
    target = _xgroup_resolve(ctx, argv, need_group=False)
    if target.group is None:
        return 0
    assert target.stream is not None
    del target.stream.groups[target.name]
    ctx.changed(key=target.key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STREAM, b"xgroup-destroy", target.key)
    ctx.ready(target.key)  # blocked XREADGROUP clients of the group fail now
    return 1


@command("xgroup|createconsumer", arity=5, flags="write denyoom", keys=(2, 2, 1),
         group="stream", since="6.2.0", complexity="O(1)",
         summary="Creates a consumer in a consumer group.",
         key_specs=[ks("RW insert", 2)])
def xgroup_createconsumer(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP CREATECONSUMER key group consumer"""
    target = _xgroup_resolve(ctx, argv, need_group=True)
    group = target.group
    assert group is not None
    _, created = group.create_consumer(target.arg, ctx.now_ms())
    if not created:
        return 0
    ctx.changed(key=target.key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STREAM, b"xgroup-createconsumer", target.key)
    return 1


@command("xgroup|delconsumer", arity=5, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(P log N) for the P entries the consumer had pending, N in the group.",
         summary="Deletes a consumer and its pending entries; returns how many it had.",
         key_specs=[ks("RW delete", 2)])
def xgroup_delconsumer(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP DELCONSUMER key group consumer"""
    target = _xgroup_resolve(ctx, argv, need_group=True)
    group = target.group
    assert group is not None
    if group.consumer(target.arg) is None:
        return 0
    pending = group.delete_consumer(target.arg)
    ctx.changed(key=target.key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STREAM, b"xgroup-delconsumer", target.key)
    return pending


help_command("xgroup", group="stream", since="5.0.0", summary="Shows the XGROUP subcommands.")
