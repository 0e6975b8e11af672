"""COMMAND and its subcommands: COUNT, INFO, DOCS, LIST, GETKEYS, HELP.

Everything is generated from the command table (:mod:`.table`).  What the
table does not say -- a command's *tips* and the flags of its key specs,
which Redis keeps in its JSON files -- is in :data:`COMMAND_EXTRAS` below,
written from what redis-server 7.0.15 answers to ``COMMAND INFO``; commands
without an entry get a key spec derived from their flags.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import (
    GETKEYS_BAD_ARITY,
    GETKEYS_INVALID_ARGUMENTS,
    GETKEYS_INVALID_COMMAND,
    GETKEYS_NO_KEYS,
    SYNTAX,
    CommandError,
    unknown_subcommand,
)
from ..resp.replies import Map, SetReply, SimpleString
from .args import ArgReader
from .contract import Ctx
from .keys import glob_match
from .replies import help_reply
from .table import COMMANDS, CommandSpec, command

log = logging.getLogger("tidelog")


# =====================================================================================
# COMMAND
# =====================================================================================


@dataclass(frozen=True)
class KeySpec:
    """One key spec as COMMAND INFO shows it (Redis 7's ``key_specs``)."""

    flags: tuple[str, ...]
    begin: int | str | None     # None: unknown; an index, or the keyword keys follow (XREAD's STREAMS)
    lastkey: int = 0
    keystep: int = 1
    limit: int = 0
    startfrom: int = 1          # for a keyword begin: where to start looking for it
    notes: str | None = None
    # find_keys "keynum" instead of "range": (keynumidx, firstkey, keystep),
    # offsets from begin (SINTERCARD numkeys key [key ...]).
    keynum: tuple[int, int, int] | None = None
    # begin None: Redis's "unknown" begin_search and find_keys (SORT's BY/GET
    # and STORE); ``find(argv)`` then gives the key positions, if any.
    find: Any = None


def _ks(flags: str, begin: int | str | None, lastkey: int = 0, keystep: int = 1,
        limit: int = 0, startfrom: int = 1, notes: str | None = None,
        keynum: tuple[int, int, int] | None = None, find: Any = None) -> KeySpec:
    return KeySpec(tuple(flags.split()), begin, lastkey, keystep, limit, startfrom, notes,
                   keynum, find)  # type: ignore[arg-type]


def _sort_store_key(argv: list[bytes]) -> list[int]:
    """Where SORT's STORE destination is (the last STORE wins), skipping the
    arguments of LIMIT, BY and GET as Redis's key finder does."""
    found: list[int] = []
    i = 2
    while i < len(argv):
        word = argv[i].upper()
        if word == b"LIMIT":
            i += 2
        elif word in (b"GET", b"BY"):
            i += 1
        elif word == b"STORE" and i + 1 < len(argv):
            found = [i + 1]
            i += 1
        i += 1
    return found


_SORT_BY_GET = _ks("RO access", None, notes="For the optional BY/GET keyword. It is marked "
                   "'unknown' because the key names derive from the content of the key we sort")
_SORT_STORE = _ks("OW update", None, notes="For the optional STORE keyword. It is marked "
                  "'unknown' because the keyword can appear anywhere in the argument array",
                  find=_sort_store_key)


_ND = "nondeterministic_output"
_SCRIPT_RW = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"
_SCRIPT_RO = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
_ALL_SHARDS = "request_policy:all_shards"

# name -> (tips, key specs or None to derive them).  Facts read from redis-server 7.0.15.
COMMAND_EXTRAS: dict[str, tuple[tuple[str, ...], list[KeySpec] | None]] = {
    "ping": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "wait": ((_ALL_SHARDS, "response_policy:agg_min"), None),
    "ssubscribe": ((), [_ks("not_key", 1, -1)]),
    "sunsubscribe": ((), [_ks("not_key", 1, -1)]),
    "spublish": ((), [_ks("not_key", 1)]),
    "client|list": ((_ND,), None),
    "slowlog|get": (("request_policy:all_nodes", _ND), None),
    "slowlog|reset": (("request_policy:all_nodes", "response_policy:all_succeeded"), None),
    "slowlog|len": (("request_policy:all_nodes", "response_policy:agg_sum", _ND), None),
    **{f"latency|{sub}": ((_ND, "request_policy:all_nodes", "response_policy:special"), None)
       for sub in ("latest", "doctor", "histogram", "graph", "history")},
    **{f"memory|{sub}": ((_ND, _ALL_SHARDS, "response_policy:special"), None)
       for sub in ("doctor", "malloc-stats", "stats")},
    "memory|purge": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "latency|reset": (("request_policy:all_nodes", "response_policy:all_succeeded"), None),
    "client|info": ((_ND,), None),
    "command": (("nondeterministic_output_order",), None),
    "command|info": (("nondeterministic_output_order",), None),
    "command|list": (("nondeterministic_output_order",), None),
    "command|docs": (("nondeterministic_output_order",), None),
    "config|set": (("request_policy:all_nodes", "response_policy:all_succeeded"), None),
    "info": ((_ND, _ALL_SHARDS, "response_policy:special"), None),
    "dbsize": ((_ALL_SHARDS, "response_policy:agg_sum"), None),
    "del": (("request_policy:multi_shard", "response_policy:agg_sum"),
            [_ks("RM delete", 1, -1)]),
    "unlink": (("request_policy:multi_shard", "response_policy:agg_sum"),
               [_ks("RM delete", 1, -1)]),
    "exists": (("request_policy:multi_shard", "response_policy:agg_sum"), [_ks("RO", 1, -1)]),
    "type": ((), [_ks("RO", 1)]),
    "keys": ((_ALL_SHARDS, "nondeterministic_output_order"), None),
    "scan": ((_ND, "request_policy:special"), None),
    "rename": ((), [_ks("RW access delete", 1), _ks("OW update", 2)]),
    "renamenx": ((), [_ks("RW access delete", 1), _ks("OW insert", 2)]),
    "copy": ((), [_ks("RO access", 1), _ks("OW update", 2)]),
    "move": ((), [_ks("RW access update", 1)]),
    "touch": (("request_policy:multi_shard", "response_policy:agg_sum"), [_ks("RO", 1, -1)]),
    "randomkey": ((_ALL_SHARDS, _ND), None),
    "dump": ((_ND,), None),
    "restore": ((), [_ks("OW update", 1)]),
    "sort": ((), [_ks("RO access", 1), _SORT_BY_GET, _SORT_STORE]),
    "sort_ro": ((), [_ks("RO access", 1), _SORT_BY_GET]),
    "ttl": ((_ND,), None),
    "pttl": ((_ND,), None),
    "flushdb": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "flushall": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "time": ((_ND,), None),
    "lastsave": ((_ND,), None),
    "object|encoding": ((_ND,), [_ks("RO", 2)]),
    "object|refcount": ((_ND,), [_ks("RO", 2)]),
    "object|idletime": ((_ND,), [_ks("RO", 2)]),
    "object|freq": ((_ND,), [_ks("RO", 2)]),
    "memory|usage": ((), [_ks("RO", 2)]),
    "set": ((), [_ks("RW access update variable_flags", 1,
                     notes="RW and ACCESS due to the optional `GET` argument")]),
    "mget": (("request_policy:multi_shard",), None),
    "incr": ((), [_ks("RW access update", 1)]),
    "decr": ((), [_ks("RW access update", 1)]),
    "incrby": ((), [_ks("RW access update", 1)]),
    "decrby": ((), [_ks("RW access update", 1)]),
    "setnx": ((), [_ks("OW insert", 1)]),
    "setex": ((), [_ks("OW update", 1)]),
    "psetex": ((), [_ks("OW update", 1)]),
    "getset": ((), [_ks("RW access update", 1)]),
    "getdel": ((), [_ks("RW access delete", 1)]),
    "getex": ((), [_ks("RW access update", 1,
                       notes="RW and UPDATE because it changes the TTL")]),
    "mset": (("request_policy:multi_shard", "response_policy:all_succeeded"),
             [_ks("OW update", 1, -1, 2)]),
    "msetnx": (("request_policy:multi_shard", "response_policy:agg_min"),
               [_ks("OW insert", 1, -1, 2)]),
    "msetex": ((), [_ks("OW update", 1, keynum=(0, 1, 2))]),
    "delex": ((), [_ks("RW delete", 1)]),
    "digest": ((), [_ks("RO", 1)]),
    "incrbyfloat": ((), [_ks("RW access update", 1)]),
    "append": ((), [_ks("RW insert", 1)]),
    "strlen": ((), [_ks("RO", 1)]),
    "setrange": ((), [_ks("RW update", 1)]),
    "lcs": ((), [_ks("RO access", 1, 1)]),
    "watch": ((), [_ks("RO", 1, -1)]),
    # streams
    "xadd": ((_ND,), [_ks("RW update", 1,
                          notes="UPDATE instead of INSERT because of the optional trimming feature")]),
    "xread": ((), [_ks("RO access", "STREAMS", -1, 1, 2, startfrom=1)]),
    "xreadgroup": ((), [_ks("RO access", "STREAMS", -1, 1, 2, startfrom=4)]),
    "xgroup|create": ((), [_ks("RW insert", 2)]),
    "xgroup|createconsumer": ((), [_ks("RW insert", 2)]),
    "xgroup|destroy": ((), [_ks("RW delete", 2)]),
    "xgroup|delconsumer": ((), [_ks("RW delete", 2)]),
    "xinfo|consumers": ((_ND,), None),
    "xclaim": ((_ND,), None),
    "xautoclaim": ((_ND,), [_ks("RW delete", 1)]),
    "xpending": ((_ND,), None),
    "xdel": ((), [_ks("RW delete", 1)]),
    "xtrim": ((_ND,), [_ks("RW delete", 1)]),
    "xlen": ((), [_ks("RO", 1)]),
    # lists
    **{name: ((), [_ks("RW insert", 1)]) for name in ("lpush", "rpush", "lpushx", "rpushx",
                                                         "linsert")},
    **{name: ((), [_ks("RW access delete", 1)]) for name in ("lpop", "rpop")},
    "llen": ((), [_ks("RO", 1)]),
    **{name: ((), [_ks("RO access", 1)]) for name in ("lrange", "lindex", "lpos")},
    "lset": ((), [_ks("RW update", 1)]),
    "lrem": ((), [_ks("RW delete", 1)]),
    "ltrim": ((), [_ks("RW delete", 1)]),
    **{name: ((), [_ks("RW access delete", 1), _ks("RW insert", 2)])
       for name in ("lmove", "rpoplpush", "blmove", "brpoplpush")},
    **{name: ((), [_ks("RW access delete", 1, -2)]) for name in ("blpop", "brpop")},
    "lmpop": ((), [_ks("RW access delete", 1, keynum=(0, 1, 1))]),
    "eval": ((), [_ks("RW access update", 2, keynum=(0, 1, 1), notes=_SCRIPT_RW)]),
    "evalsha": ((), [_ks("RW access update", 2, keynum=(0, 1, 1))]),
    "eval_ro": ((), [_ks("RO access", 2, keynum=(0, 1, 1), notes=_SCRIPT_RO)]),
    "evalsha_ro": ((), [_ks("RO access", 2, keynum=(0, 1, 1))]),
    "fcall": ((), [_ks("RW access update", 2, keynum=(0, 1, 1), notes=_SCRIPT_RW)]),
    "fcall_ro": ((), [_ks("RO access", 2, keynum=(0, 1, 1), notes=_SCRIPT_RO)]),
    "script|flush": (("request_policy:all_nodes", "response_policy:all_succeeded"), None),
    "script|load": (("request_policy:all_nodes", "response_policy:all_succeeded"), None),
    "script|exists": ((_ALL_SHARDS, "response_policy:agg_logical_and"), None),
    "script|kill": ((_ALL_SHARDS, "response_policy:one_succeeded"), None),
    "function|delete": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "function|restore": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "function|load": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "function|flush": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "function|list": (("nondeterministic_output_order",), None),
    "function|stats": ((_ND, _ALL_SHARDS, "response_policy:special"), None),
    "function|kill": ((_ALL_SHARDS, "response_policy:one_succeeded"), None),
    "blmpop": ((), [_ks("RW access delete", 2, keynum=(0, 1, 1))]),
}

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
    if spec.handler is None and spec.subcommands:  # a container: Redis shows @slow only
        return ["@slow"]
    return _ordered(spec.acl_categories(), _CATEGORY_ORDER)


def key_specs(spec: CommandSpec) -> list[KeySpec]:
    extra = COMMAND_EXTRAS.get(spec.name)
    if extra is not None and extra[1] is not None:
        return extra[1]
    if spec.first_key <= 0:
        return []
    if "write" in spec.flags:
        flags = "RW update"
    elif "readonly" in spec.flags:
        flags = "RO access"
    else:
        flags = "RO"
    last = spec.last_key - spec.first_key if spec.last_key >= 0 else spec.last_key
    return [_ks(flags, spec.first_key, last, spec.key_step or 1)]


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
    tips = COMMAND_EXTRAS.get(spec.name, ((), None))[0]
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
         summary="Get array of Redis command details", categories=("@connection",))
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
         categories=("@connection",))
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
         categories=("@connection",))
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
         summary="Get an array of Redis command names", categories=("@connection",))
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


def _keyword_keys(ks: KeySpec, argv: list[bytes]) -> list[int]:
    """Key positions for a keyword key spec (XREAD ... STREAMS k1 k2 id1 id2),
    as Redis's key specs find them: the first argument equal to the keyword
    (any case) from ``startfrom`` on, then the first 1/limit of what
    follows it (rounded down: ``STREAMS a b 0`` has the key ``a``)."""
    keyword = ks.begin.encode().upper()  # type: ignore[union-attr]
    for i in range(ks.startfrom, len(argv)):
        if argv[i].upper() == keyword:
            rest = len(argv) - (i + 1)
            return list(range(i + 1, i + 1 + rest // ks.limit))
    return []


def _keynum_keys(ks: KeySpec, argv: list[bytes]) -> list[int]:
    """Key positions for a keynum key spec (SINTERCARD numkeys k1 k2 ...)."""
    keynumidx, firstkey, keystep = ks.keynum  # type: ignore[misc]
    at = ks.begin + keynumidx  # type: ignore[operator]
    try:
        n = int(argv[at]) if at < len(argv) else 0
    except ValueError:
        return []
    first = ks.begin + firstkey  # type: ignore[operator]
    if n <= 0 or first + (n - 1) * keystep >= len(argv):
        return []
    return list(range(first, first + n * keystep, keystep))


def command_key_positions(spec: CommandSpec, argv: list[bytes]) -> list[tuple[int, KeySpec]]:
    """(argv index, key spec) of every key in a full command."""
    found: list[tuple[int, KeySpec]] = []
    for ks in key_specs(spec):
        if ks.begin is None:
            found += [(i, ks) for i in (ks.find(argv) if ks.find is not None else [])]
            continue
        if isinstance(ks.begin, str):
            found += [(i, ks) for i in _keyword_keys(ks, argv)]
            continue
        if ks.keynum is not None:
            found += [(i, ks) for i in _keynum_keys(ks, argv)]
            continue
        first = ks.begin
        last = first + ks.lastkey if ks.lastkey >= 0 else len(argv) + ks.lastkey
        found += [(i, ks) for i in range(first, min(last, len(argv) - 1) + 1, ks.keystep)]
    return found


def _target_command(argv: list[bytes]) -> list[bytes]:
    """GETKEYS' ``command [arg [arg ...]]``: the full command to look into."""
    r = ArgReader(argv, 2)
    target = r.take(r.remaining())
    r.finish()
    return target


def _getkeys(target: list[bytes]) -> list[tuple[bytes, KeySpec]]:
    """(key, key spec) of every key in a full command, or Redis's GETKEYS errors."""
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
    keys = [(target[i], ks) for i, ks in command_key_positions(spec, target)]
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
    out = []
    for key, ks in _getkeys(target):
        flags = ks.flags
        if target[0].lower() == b"set" and "variable_flags" in flags:
            # SET only reads the old value with GET (an option after key and value).
            get = any(a.upper() == b"GET" for a in target[3:])
            flags = ("RW", "access", "update") if get else ("OW", "update")
        out.append([key, SetReply([SimpleString(f.encode()) for f in flags])])
    return out


_COMMAND_HELP = [
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
]


@command("command|help", arity=2, flags="loading stale", group="server", since="5.0.0",
         complexity="O(1)", summary="Show helpful text about the different subcommands",
         categories=("@connection",))
def command_help(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND HELP"""
    return help_reply(_COMMAND_HELP)
