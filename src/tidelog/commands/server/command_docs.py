"""COMMAND and its subcommands: COUNT, INFO, DOCS, LIST, GETKEYS, HELP.

Everything is generated from the command table (:mod:`.table`) and the
key specs and tips of :mod:`.key_specs`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from ...errors import (
    GETKEYS_BAD_ARITY,
    GETKEYS_INVALID_ARGUMENTS,
    GETKEYS_INVALID_COMMAND,
    GETKEYS_NO_KEYS,
    SYNTAX,
    CommandError,
    unknown_subcommand,
)
from ...glob import glob_match
from ...resp.replies import Map, SetReply, SimpleString
from ..args import ArgReader
from ..contract import Ctx
from ..key_specs import KeySpec, call_flags, command_key_positions, key_specs
from ..replies import help_command
from ..table import COMMANDS, CommandSpec, command

log = logging.getLogger("tidelog")


# Redis lists flags and ACL categories in the order of its own bit tables.
_FLAG_ORDER = [
    "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
    "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
    "may_replicate", "sentinel", "only_sentinel", "no_mandatory_keys", "protected",
    "module_getkeys", "module_no_cluster", "no_async_loading", "no_multi", "movablekeys",
    "allow_busy",
]
_CATEGORY_ORDER = [
    "@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash", "@string",
    "@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub", "@admin", "@fast", "@slow",
    "@blocking", "@dangerous", "@connection", "@transaction", "@scripting",
]


def _ordered(items: Iterable[str], order: list[str]) -> list[str]:
    rank = {name: i for i, name in enumerate(order)}
    return sorted(dict.fromkeys(items), key=lambda x: (rank.get(x, len(order)), x))


def command_flags(spec: CommandSpec) -> list[str]:
    return _ordered(spec.flags, _FLAG_ORDER)


def command_categories(spec: CommandSpec) -> list[str]:
    if spec.handler is None and spec.subcommands:
        # a container: Redis shows @slow and what its table names (HIMPORT: @hash);
        # a "-@..." entry only takes the group's category off its subcommands (PUBSUB)
        named = [c for c in spec.categories if not c.startswith("-")]
        return _ordered(["@slow", *named], _CATEGORY_ORDER)
    return _ordered(spec.acl_categories(), _CATEGORY_ORDER)



def _key_spec_reply(ks: KeySpec) -> Map:
    items: list[tuple[Any, Any]] = []
    if ks.notes is not None:
        items.append((b"notes", ks.notes.encode()))
    items.append((b"flags", SetReply([SimpleString(f.encode()) for f in ks.flags])))
    if ks.begin is None:
        items.append((b"begin_search", Map([(b"type", b"unknown"), (b"spec", Map([]))])))
        items.append((b"find_keys", Map([(b"type", b"unknown"), (b"spec", Map([]))])))
        return Map(items)
    if isinstance(ks.begin, str):
        begin = Map([(b"type", b"keyword"), (b"spec", Map([
            (b"keyword", ks.begin.encode()), (b"startfrom", ks.startfrom)]))])
    else:
        begin = Map([(b"type", b"index"), (b"spec", Map([(b"index", ks.begin)]))])
    items.append((b"begin_search", begin))
    if ks.keynum is not None:
        keynumidx, firstkey, keystep = ks.keynum
        items.append((b"find_keys", Map([(b"type", b"keynum"), (b"spec", Map([
            (b"keynumidx", keynumidx), (b"firstkey", firstkey), (b"keystep", keystep)]))])))
        return Map(items)
    items.append((b"find_keys", Map([(b"type", b"range"), (b"spec", Map([
        (b"lastkey", ks.lastkey), (b"keystep", ks.keystep), (b"limit", ks.limit)]))])))
    return Map(items)


def info_reply(spec: CommandSpec) -> list[Any]:
    """COMMAND INFO's ten-element description of one command."""
    tips = spec.tips
    subs = [info_reply(sub) for sub in spec.subcommands.values()]
    return [
        spec.name.encode(),
        spec.arity,
        SetReply([SimpleString(f.encode()) for f in command_flags(spec)]),
        spec.first_key,
        spec.last_key,
        spec.key_step,
        SetReply([SimpleString(c.encode()) for c in command_categories(spec)]),
        SetReply([t.encode() for t in tips]),
        SetReply([_key_spec_reply(ks) for ks in key_specs(spec)]),
        subs if subs else SetReply([]),
    ]


def docs_reply(spec: CommandSpec) -> Map:
    items: list[tuple[Any, Any]] = [
        (b"summary", spec.summary.encode()),
        (b"since", spec.since.encode()),
        (b"group", spec.group.encode()),
        (b"complexity", spec.complexity.encode()),
    ]
    if spec.doc_flags:  # Redis's place for them: after complexity
        items.append((b"doc_flags", SetReply([SimpleString(f.encode()) for f in spec.doc_flags])))
    if spec.subcommands:
        items.append((b"subcommands", Map([
            (sub.name.encode(), docs_reply(sub)) for sub in spec.subcommands.values()])))
    return Map(items)


def find_command(name: bytes) -> CommandSpec | None:
    """A command by name, ``container|sub`` names included."""
    parent, bar, sub = name.decode("latin-1").lower().partition("|")
    spec = COMMANDS.get(parent)
    if spec is not None and bar:
        return spec.subcommands.get(sub)
    return spec


def all_commands() -> Iterable[CommandSpec]:
    """Every command, each container followed by its subcommands."""
    for spec in COMMANDS.values():
        yield spec
        yield from spec.subcommands.values()


@command("command", arity=-1, flags="loading stale", group="server", since="2.8.13",
         complexity="O(N) where N is the total number of Redis commands",
         summary="Get array of Redis command details", categories=("@connection",),
         tips=("nondeterministic_output_order",), help=(
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
))
def command_(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND [subcommand [argument ...]]"""
    r = ArgReader(argv)
    if r.more():  # a subcommand we do not have
        raise unknown_subcommand(r.next_bytes(), argv[0])
    r.finish()
    return [info_reply(spec) for spec in COMMANDS.values()]


@command("command|count", arity=2, flags="loading stale", group="server", since="2.8.13",
         complexity="O(1)", summary="Get total number of Redis commands",
         categories=("@connection",))
def command_count(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND COUNT"""
    return len(COMMANDS)


@command("command|info", arity=-2, flags="loading stale", group="server", since="2.8.13",
         complexity="O(N) where N is the number of commands to look up",
         summary="Get array of specific Redis command details, or all when no argument is given.",
         categories=("@connection",),
         tips=("nondeterministic_output_order",))
def command_info(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND INFO [command-name [command-name ...]]"""
    r = ArgReader(argv, 2)
    if not r.more():
        return [info_reply(spec) for spec in COMMANDS.values()]
    names = r.take(r.remaining())
    r.finish()
    return [None if (spec := find_command(name)) is None else info_reply(spec)
            for name in names]


@command("command|docs", arity=-2, flags="loading stale", group="server", since="7.0.0",
         complexity="O(N) where N is the number of commands to look up",
         summary="Get array of specific Redis command documentation",
         categories=("@connection",),
         tips=("nondeterministic_output_order",))
def command_docs(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND DOCS [command-name [command-name ...]]"""
    r = ArgReader(argv, 2)
    if not r.more():
        specs = list(COMMANDS.values())
    else:
        names = r.take(r.remaining())
        specs = [spec for name in names if (spec := find_command(name)) is not None]
    r.finish()
    return Map([(spec.name.encode(), docs_reply(spec)) for spec in specs])


@command("command|list", arity=-2, flags="loading stale", group="server", since="7.0.0",
         complexity="O(N) where N is the total number of Redis commands",
         summary="Get an array of Redis command names", categories=("@connection",),
         tips=("nondeterministic_output_order",))
def command_list(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND LIST [FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]"""
    specs = list(all_commands())
    r = ArgReader(argv, 2)
    if r.more():
        if r.next_upper() != b"FILTERBY" or r.remaining() != 2:
            raise CommandError(SYNTAX)
        kind, value = r.next_upper(), r.next_bytes()
        if kind == b"MODULE":
            specs = []  # no modules
        elif kind == b"ACLCAT":
            category = "@" + value.decode("latin-1").lower()
            specs = [s for s in specs if s.handler is not None and category in s.acl_categories()]
        elif kind == b"PATTERN":
            specs = [s for s in specs if glob_match(value, s.name.encode(), nocase=True)]
        else:
            raise CommandError(SYNTAX)
    r.finish()
    return [spec.name.encode() for spec in specs]



def _target_command(argv: list[bytes]) -> list[bytes]:
    """GETKEYS' ``command [arg [arg ...]]``: the full command to look into."""
    r = ArgReader(argv, 2)
    target = r.take(r.remaining())
    r.finish()
    return target


def _getkeys(target: list[bytes]) -> list[tuple[bytes, tuple[str, ...]]]:
    """(key, its flags in this call) of every key in a full command, or
    Redis's GETKEYS errors."""
    spec = COMMANDS.get(target[0].decode("latin-1").lower())
    if spec is not None and spec.subcommands and len(target) > 1:
        spec = spec.subcommands.get(target[1].decode("latin-1").lower())
    if spec is None:
        raise CommandError(GETKEYS_INVALID_COMMAND)
    if not [ks for ks in key_specs(spec) if "not_key" not in ks.flags]:
        # Shard channels are "keys" for cluster routing only (not_key): as 7.0.15.
        raise CommandError(GETKEYS_NO_KEYS)
    argc = len(target)
    if (spec.arity > 0 and argc != spec.arity) or argc < -spec.arity:
        raise CommandError(GETKEYS_BAD_ARITY)
    keys = [(target[i], call_flags(spec, ks, target))
            for i, ks in command_key_positions(spec, target)]
    if not keys and "no_mandatory_keys" not in spec.flags:  # EVAL script 0: none, no error
        raise CommandError(GETKEYS_INVALID_ARGUMENTS)
    return keys


@command("command|getkeys", arity=-4, flags="loading stale", group="server", since="2.8.13",
         complexity="O(N) where N is the number of arguments to the command",
         summary="Extract keys given a full Redis command", categories=("@connection",))
def command_getkeys(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND GETKEYS command [arg [arg ...]]"""
    return [key for key, _ in _getkeys(_target_command(argv))]


@command("command|getkeysandflags", arity=-4, flags="loading stale", group="server",
         since="7.0.0", complexity="O(N) where N is the number of arguments to the command",
         summary="Extract keys and access flags given a full Redis command",
         categories=("@connection",))
def command_getkeysandflags(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND GETKEYSANDFLAGS command [arg [arg ...]]"""
    target = _target_command(argv)
    return [[key, SetReply([SimpleString(f.encode()) for f in flags])]
            for key, flags in _getkeys(target)]


help_command("command", group="server", since="5.0.0",
             summary="Show helpful text about the different subcommands", categories=("@connection",))
