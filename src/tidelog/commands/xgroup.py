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

from .. import errors
from ..errors import CommandError
from ..ids import MIN_ID
from ..resp.replies import OK
from ..types.groups import UNKNOWN, ConsumerGroup
from ..types.stream import Stream
from .args import parse_int
from .contract import Ctx
from .replies import (
    help_reply,
)
from .stream_args import (
    parse_id_arg,
    parse_strict_id_arg,
)
from .table import command

_XGROUP_HELP = [
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
]


# -- XGROUP -----------------------------------------------------------------------------

@command("xgroup", arity=-2, group="stream", since="5.0.0", complexity="Depends on subcommand.",
         summary="A container for consumer groups commands.", container=True)
def xgroup(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP subcommand [argument ...]"""


@dataclass(slots=True)
class _XGroupTarget:
    """What every XGROUP subcommand but HELP resolves first."""

    key: bytes
    stream: Stream | None
    group: ConsumerGroup | None
    mkstream: bool = False
    entries_read: int = UNKNOWN


def _xgroup_resolve(ctx: Ctx, argv: list[bytes], need_group: bool) -> _XGroupTarget:
    """Options, key, and group, in Redis's order.

    1. CREATE's MKSTREAM / ENTRIESREAD and SETID's ENTRIESREAD (argv[5:]),
       each error as met (an unknown word is a syntax error; too many
       arguments are refused by the subcommand, after these checks);
    2. the key's type (WRONGTYPE);
    3. unless MKSTREAM: the key must exist, and SETID, CREATECONSUMER and
       DELCONSUMER need the group.
    """
    sub = argv[1].lower()
    target = _XGroupTarget(argv[2], None, None)
    i = 5
    while i < len(argv):
        opt = argv[i].upper()
        if sub == b"create" and opt == b"MKSTREAM":
            target.mkstream = True
            i += 1
        elif opt == b"ENTRIESREAD" and i + 1 < len(argv):
            value = parse_int(argv[i + 1])
            if value < 0 and value != UNKNOWN:
                raise CommandError(errors.ENTRIESREAD_INVALID)
            target.entries_read = value
            i += 2
        else:
            raise errors.subcommand_syntax(argv[1], b"xgroup")
    target.stream = ctx.db.get_stream(target.key)
    if not target.mkstream:
        if target.stream is None:
            raise CommandError(errors.XGROUP_KEY_MISSING)
        target.group = target.stream.groups.get(argv[3])
        if need_group and target.group is None:
            raise errors.nogroup_for_key(argv[3], target.key)
    return target


@command("xgroup|create", arity=-5, flags="write denyoom", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Creates a consumer group, and the stream too with MKSTREAM.")
def xgroup_create(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP CREATE key group <id | $> [MKSTREAM] [ENTRIESREAD entries-read]"""
    target = _xgroup_resolve(ctx, argv, need_group=False)
    if len(argv) > 8:
        raise errors.subcommand_syntax(argv[1], b"xgroup")
    stream = target.stream
    if argv[4] == b"$":
        last_id = stream.last_id if stream is not None else MIN_ID
    else:
        last_id = parse_strict_id_arg(argv[4])
    if stream is None:  # MKSTREAM, now that nothing can fail
        stream = Stream()
        ctx.db.set(target.key, stream)
        ctx.modified(target.key)
    name = argv[3]
    if name in stream.groups:
        raise CommandError(errors.BUSYGROUP)
    stream.groups[name] = ConsumerGroup(name, last_id, target.entries_read)
    ctx.changed()
    ctx.propagate_argv()
    return OK


@command("xgroup|setid", arity=-5, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Moves a consumer group's last delivered ID.")
def xgroup_setid(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP SETID key group <id | $> [ENTRIESREAD entries-read]"""
    target = _xgroup_resolve(ctx, argv, need_group=True)
    if len(argv) not in (5, 7):
        raise errors.subcommand_syntax(argv[1], b"xgroup")
    stream, group = target.stream, target.group
    assert stream is not None and group is not None
    new_id = stream.last_id if argv[4] == b"$" else parse_id_arg(argv[4])
    entries_read = None if target.entries_read == UNKNOWN else target.entries_read
    group.set_id(new_id, entries_read, stream)
    ctx.changed()
    ctx.propagate_argv()
    return OK


@command("xgroup|destroy", arity=4, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(N) where N is the number of entries in the group's pending entries list.",
         summary="Destroys a consumer group; blocked readers of it get an error.")
def xgroup_destroy(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP DESTROY key group"""
    target = _xgroup_resolve(ctx, argv, need_group=False)
    if target.group is None:
        return 0
    assert target.stream is not None
    del target.stream.groups[argv[3]]
    ctx.changed()
    ctx.propagate_argv()
    ctx.ready(target.key)  # blocked XREADGROUP clients of the group fail now
    return 1


@command("xgroup|createconsumer", arity=5, flags="write denyoom", keys=(2, 2, 1),
         group="stream", since="6.2.0", complexity="O(1)",
         summary="Creates a consumer in a consumer group.")
def xgroup_createconsumer(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP CREATECONSUMER key group consumer"""
    group = _xgroup_resolve(ctx, argv, need_group=True).group
    assert group is not None
    _, created = group.create_consumer(argv[4], ctx.now_ms())
    if not created:
        return 0
    ctx.changed()
    ctx.propagate_argv()
    return 1


@command("xgroup|delconsumer", arity=5, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(P log N) for the P entries the consumer had pending, N in the group.",
         summary="Deletes a consumer and its pending entries; returns how many it had.")
def xgroup_delconsumer(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP DELCONSUMER key group consumer"""
    group = _xgroup_resolve(ctx, argv, need_group=True).group
    assert group is not None
    if group.consumer(argv[4]) is None:
        return 0
    pending = group.delete_consumer(argv[4])
    ctx.changed()
    ctx.propagate_argv()
    return pending


@command("xgroup|help", arity=2, flags="loading stale", group="stream", since="5.0.0",
         complexity="O(1)", summary="Shows the XGROUP subcommands.")
def xgroup_help(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP HELP"""
    return help_reply(_XGROUP_HELP)
