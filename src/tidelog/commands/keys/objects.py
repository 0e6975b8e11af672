"""OBJECT and its subcommands (ENCODING, REFCOUNT, IDLETIME, FREQ, HELP)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import LFU_NOT_SELECTED, LFU_SELECTED, CommandError
from ..encoding import idle_seconds, object_encoding, refcount
from ..key_specs import ND, ks
from ..lookup import lookup_read
from ..replies import help_command
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


@command("object", arity=-2, group="generic", since="2.2.3", complexity="Depends on subcommand.",
         summary="A container for object introspection commands", container=True, help=(
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
))
def object_(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT subcommand [argument ...]"""


def _object_lookup(ctx: Ctx, key: bytes) -> Any:
    return lookup_read(ctx, key, touch=False, notify=False)


@command("object|encoding", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="2.2.3", complexity="O(1)", summary="Inspect the internal encoding of a Redis object",
         tips=(ND,),
         key_specs=[ks("RO", 2)])
def object_encoding_(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT ENCODING key"""
    value = _object_lookup(ctx, argv[2])
    return None if value is None else object_encoding(value)


@command("object|refcount", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="2.2.3", complexity="O(1)",
         summary="Get the number of references to the value of the key",
         tips=(ND,),
         key_specs=[ks("RO", 2)])
def object_refcount(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT REFCOUNT key"""
    value = _object_lookup(ctx, argv[2])
    return None if value is None else refcount(value)


@command("object|idletime", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="2.2.3", complexity="O(1)",
         summary="Get the time since a Redis object was last accessed",
         tips=(ND,),
         key_specs=[ks("RO", 2)])
def object_idletime(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT IDLETIME key"""
    if _object_lookup(ctx, argv[2]) is None:
        return None
    if ctx.db.lfu is not None:
        raise CommandError(LFU_SELECTED)
    return idle_seconds(ctx, argv[2])


@command("object|freq", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="4.0.0", complexity="O(1)",
         summary="Get the logarithmic access frequency counter of a Redis object",
         tips=(ND,),
         key_specs=[ks("RO", 2)])
def object_freq(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT FREQ key"""
    if _object_lookup(ctx, argv[2]) is None:
        return None
    if ctx.db.lfu is None:
        raise CommandError(LFU_NOT_SELECTED)
    return ctx.db.frequency(argv[2])


help_command("object", group="generic", since="6.2.0",
             summary="Show helpful text about the different subcommands")
