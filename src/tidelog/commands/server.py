"""Server commands: COMMAND, CONFIG, INFO, DBSIZE, FLUSHDB, FLUSHALL, TIME,
MEMORY, DEBUG and SHUTDOWN.

``COMMAND INFO/DOCS/LIST/COUNT/GETKEYS`` are generated from the command
table (:mod:`tidelog.commands.table`).  What the table does not say -- a
command's *tips* and the flags of its key specs, which Redis keeps in its
JSON files -- is in :data:`COMMAND_EXTRAS` below, written from what
redis-server 7.0.15 answers to ``COMMAND INFO``; commands without an entry
get a key spec derived from their flags.

``INFO`` reports only what Tidelog measures; counters it does not keep
(network bytes, per-command time, latency percentiles) are left out rather
than invented.
"""

from __future__ import annotations

import logging
import os
import platform
import resource
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterable, TYPE_CHECKING

from .. import REDIS_VERSION, __version__, kernels
from ..config import OPTIONS, ConfigError
from ..errors import (
    GETKEYS_BAD_ARITY, GETKEYS_INVALID_COMMAND, GETKEYS_NO_KEYS, NO_CONFIG_FILE, NO_SUCH_KEY,
    NO_SHUTDOWN_IN_PROGRESS, SHUTDOWN_FAILED, SYNTAX, CommandError, config_set_failed,
    debug_unknown_subcommand, unknown_config, unknown_subcommand,
)
from ..resp.replies import OK, Map, RawReply, SetReply, SimpleString, Verbatim
from ..types.stream import Stream
from .aof import aof_info_lines, debug_loadaof
from .persistence import debug_reload, rdb_info_lines, shutdown_save
from .args import parse_int
from .connection import help_reply
from .keys import glob_match, idle_seconds, object_encoding, refcount
from .table import COMMANDS, CommandSpec, command

if TYPE_CHECKING:
    from ..engine import Ctx

log = logging.getLogger("tidelog")

# =====================================================================================
# COMMAND
# =====================================================================================


@dataclass(frozen=True)
class KeySpec:
    """One key spec as COMMAND INFO shows it (Redis 7's ``key_specs``)."""

    flags: tuple[str, ...]
    begin: int | str            # an index, or the keyword keys follow (XREAD's STREAMS)
    lastkey: int = 0
    keystep: int = 1
    limit: int = 0
    startfrom: int = 1          # for a keyword begin: where to start looking for it
    notes: str | None = None


def _ks(flags: str, begin: int | str, lastkey: int = 0, keystep: int = 1, limit: int = 0,
        startfrom: int = 1, notes: str | None = None) -> KeySpec:
    return KeySpec(tuple(flags.split()), begin, lastkey, keystep, limit, startfrom, notes)


_ND = "nondeterministic_output"
_ALL_SHARDS = "request_policy:all_shards"

# name -> (tips, key specs or None to derive them).  Facts read from redis-server 7.0.15.
COMMAND_EXTRAS: dict[str, tuple[tuple[str, ...], list[KeySpec] | None]] = {
    "ping": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "client|list": ((_ND,), None),
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
    if isinstance(ks.begin, str):
        begin = Map([(b"type", b"keyword"), (b"spec", Map([
            (b"keyword", ks.begin.encode()), (b"startfrom", ks.startfrom)]))])
    else:
        begin = Map([(b"type", b"index"), (b"spec", Map([(b"index", ks.begin)]))])
    items.append((b"begin_search", begin))
    items.append((b"find_keys", Map([(b"type", b"range"), (b"spec", Map([
        (b"lastkey", ks.lastkey), (b"keystep", ks.keystep), (b"limit", ks.limit)]))])))
    return Map(items)


def command_info(spec: CommandSpec) -> list[Any]:
    """COMMAND INFO's ten-element description of one command."""
    tips = COMMAND_EXTRAS.get(spec.name, ((), None))[0]
    subs = [command_info(sub) for sub in spec.subcommands.values()]
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


def command_docs(spec: CommandSpec) -> Map:
    items: list[tuple[Any, Any]] = [
        (b"summary", spec.summary.encode()),
        (b"since", spec.since.encode()),
        (b"group", spec.group.encode()),
        (b"complexity", spec.complexity.encode()),
    ]
    if spec.subcommands:
        items.append((b"subcommands", Map([
            (sub.name.encode(), command_docs(sub)) for sub in spec.subcommands.values()])))
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
    if len(argv) > 1:  # a subcommand we do not have
        raise unknown_subcommand(argv[1], argv[0])
    return [command_info(spec) for spec in COMMANDS.values()]


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
def command_info_(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND INFO [command-name [command-name ...]]"""
    if len(argv) == 2:
        return [command_info(spec) for spec in COMMANDS.values()]
    return [None if (spec := find_command(name)) is None else command_info(spec)
            for name in argv[2:]]


@command("command|docs", arity=-2, flags="loading stale", group="server", since="7.0.0",
         complexity="O(N) where N is the number of commands to look up",
         summary="Get array of specific Redis command documentation",
         categories=("@connection",))
def command_docs_(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND DOCS [command-name [command-name ...]]"""
    if len(argv) == 2:
        specs = list(COMMANDS.values())
    else:
        specs = [spec for name in argv[2:] if (spec := find_command(name)) is not None]
    return Map([(spec.name.encode(), command_docs(spec)) for spec in specs])


@command("command|list", arity=-2, flags="loading stale", group="server", since="7.0.0",
         complexity="O(N) where N is the total number of Redis commands",
         summary="Get an array of Redis command names", categories=("@connection",))
def command_list(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND LIST [FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]"""
    specs = list(all_commands())
    if len(argv) == 5 and argv[2].upper() == b"FILTERBY":
        kind, value = argv[3].upper(), argv[4]
        if kind == b"MODULE":
            specs = []  # no modules
        elif kind == b"ACLCAT":
            category = "@" + value.decode("latin-1").lower()
            specs = [s for s in specs if s.handler is not None and category in s.acl_categories()]
        elif kind == b"PATTERN":
            specs = [s for s in specs if glob_match(value, s.name.encode(), nocase=True)]
        else:
            raise CommandError(SYNTAX)
    elif len(argv) != 2:
        raise CommandError(SYNTAX)
    return [spec.name.encode() for spec in specs]


def _keyword_keys(ks: KeySpec, argv: list[bytes]) -> list[int]:
    """Key positions for a keyword key spec (XREAD ... STREAMS k1 k2 id1 id2)."""
    keyword = ks.begin.encode().upper()  # type: ignore[union-attr]
    for i in range(ks.startfrom, len(argv)):
        if argv[i].upper() == keyword:
            rest = len(argv) - (i + 1)
            if rest == 0 or rest % ks.limit:
                return []
            return list(range(i + 1, i + 1 + rest // ks.limit))
    return []


def command_key_positions(spec: CommandSpec, argv: list[bytes]) -> list[tuple[int, KeySpec]]:
    """(argv index, key spec) of every key in a full command."""
    found: list[tuple[int, KeySpec]] = []
    for ks in key_specs(spec):
        if isinstance(ks.begin, str):
            found += [(i, ks) for i in _keyword_keys(ks, argv)]
            continue
        first = ks.begin
        last = first + ks.lastkey if ks.lastkey >= 0 else len(argv) + ks.lastkey
        found += [(i, ks) for i in range(first, min(last, len(argv) - 1) + 1, ks.keystep)]
    return found


def _getkeys(argv: list[bytes]) -> list[tuple[bytes, KeySpec]]:
    target = argv[2:]
    spec = COMMANDS.get(target[0].decode("latin-1").lower())
    if spec is not None and spec.subcommands and len(target) > 1:
        spec = spec.subcommands.get(target[1].decode("latin-1").lower())
    if spec is None:
        raise CommandError(GETKEYS_INVALID_COMMAND)
    if not key_specs(spec):
        raise CommandError(GETKEYS_NO_KEYS)
    argc = len(target)
    if (spec.arity > 0 and argc != spec.arity) or argc < -spec.arity:
        raise CommandError(GETKEYS_BAD_ARITY)
    keys = [(target[i], ks) for i, ks in command_key_positions(spec, target)]
    if not keys:
        raise CommandError(b"ERR Invalid arguments specified for command")
    return keys


@command("command|getkeys", arity=-4, flags="loading stale", group="server", since="2.8.13",
         complexity="O(N) where N is the number of arguments to the command",
         summary="Extract keys given a full Redis command", categories=("@connection",))
def command_getkeys(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND GETKEYS command [arg [arg ...]]"""
    return [key for key, _ in _getkeys(argv)]


@command("command|getkeysandflags", arity=-4, flags="loading stale", group="server",
         since="7.0.0", complexity="O(N) where N is the number of arguments to the command",
         summary="Extract keys and access flags given a full Redis command",
         categories=("@connection",))
def command_getkeysandflags(ctx: Ctx, argv: list[bytes]) -> object:
    """COMMAND GETKEYSANDFLAGS command [arg [arg ...]]"""
    out = []
    for key, ks in _getkeys(argv):
        flags = ks.flags
        if argv[2].lower() == b"set" and "variable_flags" in flags:
            # SET only reads the old value with GET; otherwise it overwrites.
            get = any(a.upper() == b"GET" for a in argv[5:])
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


# =====================================================================================
# CONFIG
# =====================================================================================
_LOG_LEVELS = {"debug": logging.DEBUG, "verbose": logging.INFO, "notice": logging.INFO,
               "warning": logging.WARNING, "nothing": logging.CRITICAL + 1}


def _apply_config(ctx: Ctx, name: str) -> None:
    """Side effects of a changed option (most are read where used)."""
    if name == "loglevel":
        logging.getLogger("tidelog").setLevel(_LOG_LEVELS[ctx.config["loglevel"]])
    elif name == "appendonly" and ctx.engine.aof_switch is not None:
        try:
            ctx.engine.aof_switch(ctx.config["appendonly"])
        except OSError as exc:
            logging.getLogger("tidelog").warning("Unable to turn on the AOF: %s", exc)
            ctx.config.set("appendonly", "no")
            raise config_set_failed(b"appendonly",
                                    b"Unable to turn on AOF. Check server logs.") from None


@command("config", arity=-2, group="server", since="2.0.0", complexity="Depends on subcommand.",
         summary="A container for server configuration commands", container=True)
def config_(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG subcommand [argument ...]"""


def config_get(ctx: Ctx, patterns: list[bytes]) -> list[tuple[bytes, bytes]]:
    """(name, value) for every option matching one of the patterns, each once.

    A pattern without glob characters is an exact, case-insensitive name and
    is answered with the name as given (as Redis does)."""
    found: dict[str, bytes] = {}  # canonical name -> name shown
    for pattern in patterns:
        if not any(c in pattern for c in b"*?["):
            name = pattern.decode("latin-1").lower()
            if name in OPTIONS and name not in found:
                found[name] = pattern
            continue
        for name in OPTIONS:
            if name not in found and glob_match(pattern, name.encode(), nocase=True):
                found[name] = name.encode()
    return [(shown, ctx.config.show(name).encode()) for name, shown in found.items()]


@command("config|get", arity=-3, flags="admin noscript loading stale", group="server",
         since="2.0.0", complexity="O(N) when N is the number of configuration parameters provided",
         summary="Get the values of configuration parameters")
def config_get_(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG GET parameter [parameter ...]"""
    return Map(config_get(ctx, argv[2:]))


@command("config|set", arity=-4, flags="admin noscript loading stale", group="server",
         since="2.0.0", complexity="O(N) when N is the number of configuration parameters provided",
         summary="Set configuration parameters to the given values")
def config_set(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG SET parameter value [parameter value ...]"""
    if len(argv) % 2:
        raise CommandError(SYNTAX)
    pairs = [(argv[i], argv[i + 1]) for i in range(2, len(argv), 2)]
    names: list[str] = []
    for given, _ in pairs:  # names first: unknown, immutable, duplicate
        name = given.decode("latin-1").lower()
        option = OPTIONS.get(name)
        if option is None:
            raise unknown_config(given)
        if not option.mutable:
            raise config_set_failed(given, b"can't set immutable config")
        if name in names:
            raise config_set_failed(given, b"duplicate parameter")
        names.append(name)
    values = []
    for name, (_, text) in zip(names, pairs):  # then every value, before applying any
        try:
            value = text.decode("utf-8", "surrogateescape")
            OPTIONS[name].parse(value)
            if name == "dir" and not os.path.isdir(value):
                raise ConfigError("No such file or directory")
        except ConfigError as exc:
            raise config_set_failed(name.encode(), str(exc).encode()) from None
        values.append(value)
    for name, value in zip(names, values):
        ctx.config.set(name, value)
        _apply_config(ctx, name)
    return OK


@command("config|resetstat", arity=2, flags="admin noscript loading stale", group="server",
         since="2.0.0", complexity="O(1)", summary="Reset the stats returned by INFO")
def config_resetstat(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG RESETSTAT"""
    engine = ctx.engine
    for name in engine.stats:
        engine.stats[name] = 0
    engine.command_calls.clear()
    return OK


def _config_line(name: str, shown: str) -> str:
    words = shown.split() if OPTIONS[name].multi_arg else [shown]
    return " ".join([name, *(_quote(w) for w in words)])


def _quote(word: str) -> str:
    if word and not any(c in word for c in " \t\r\n\"'\\#"):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def rewrite_config_text(ctx: Ctx, text: str) -> str:
    """The config file text with every option's current value, Redis's way:
    an option already in the file is rewritten in place (its later
    duplicates dropped), an option not in the file is appended only when it
    differs from its default, comments and blank lines are kept."""
    config = ctx.config
    out: list[str] = []
    done: set[str] = set()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            out.append(raw)
            continue
        try:
            name = shlex.split(line)[0].lower()
        except (ValueError, IndexError):
            out.append(raw)
            continue
        if name not in OPTIONS:
            out.append(raw)
            continue
        if name in done:
            continue
        done.add(name)
        out.append(_config_line(name, config.show(name)))
    appended = False
    for name, option in OPTIONS.items():
        if name in done:
            continue
        shown = config.show(name)
        if shown == option.show(option.parse(option.default)):
            continue
        if not appended:
            out.append("# Generated by CONFIG REWRITE")
            appended = True
        out.append(_config_line(name, shown))
    return "\n".join(out) + "\n"


@command("config|rewrite", arity=2, flags="admin noscript loading stale", group="server",
         since="2.8.0", complexity="O(1)",
         summary="Rewrite the configuration file with the in memory configuration")
def config_rewrite(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG REWRITE"""
    path = ctx.config.config_file
    if not path:
        raise CommandError(NO_CONFIG_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise CommandError(b"ERR Rewriting config file: " + str(exc.strerror).encode()) from None
    new_text = rewrite_config_text(ctx, text)
    directory = os.path.dirname(os.path.abspath(path))
    try:  # write a sibling file and rename it over the old one: never half a file
        fd, tmp = tempfile.mkstemp(prefix=".tidelog-config-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(new_text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("CONFIG REWRITE failed: %s", exc)
        raise CommandError(b"ERR Rewriting config file: " + str(exc.strerror).encode()) from None
    log.info("CONFIG REWRITE executed with success.")
    return OK


_CONFIG_HELP = [
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
]


@command("config|help", arity=2, flags="loading stale", group="server", since="5.0.0",
         complexity="O(1)", summary="Show helpful text about the different subcommands")
def config_help(ctx: Ctx, argv: list[bytes]) -> object:
    """CONFIG HELP"""
    return help_reply(_CONFIG_HELP)


# =====================================================================================
# INFO
# =====================================================================================
def bytes_to_human(n: int) -> str:
    """Redis's bytesToHuman: 1023B, 1.00K, 1.50M ..."""
    if n < 1024:
        return f"{n}B"
    for unit in "KMGTP":
        n_units = n / 1024
        if n_units < 1024 or unit == "P":
            return f"{n_units:.2f}{unit}"
        n = n_units  # type: ignore[assignment]
    raise AssertionError  # pragma: no cover


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _total_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def _section_server(ctx: Ctx) -> list[str]:
    engine = ctx.engine
    uptime = int(engine.clock.monotonic() - engine.started)
    uname = platform.uname()
    return [
        f"redis_version:{REDIS_VERSION}",
        "redis_git_sha1:00000000",
        "redis_git_dirty:0",
        "redis_build_id:0",
        "redis_mode:standalone",
        f"tidelog_version:{__version__}",
        f"tidelog_kernels:{kernels.status()}",
        f"os:{uname.system} {uname.release} {uname.machine}",
        f"arch_bits:{64 if sys.maxsize > 2**32 else 32}",
        f"python_version:{platform.python_version()}",
        f"process_id:{os.getpid()}",
        "process_supervised:no",
        f"run_id:{engine.run_id}",
        f"tcp_port:{ctx.config['port']}",
        f"server_time_usec:{engine.clock.now_us()}",
        f"uptime_in_seconds:{uptime}",
        f"uptime_in_days:{uptime // 86400}",
        f"hz:{ctx.config['hz']}",
        f"configured_hz:{ctx.config['hz']}",
        f"lru_clock:{(engine.clock.now_ms() // 1000) & ((1 << 24) - 1)}",
        f"executable:{os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ''}",
        f"config_file:{ctx.config.config_file or ''}",
        "io_threads_active:0",
    ]


def _section_clients(ctx: Ctx) -> list[str]:
    engine = ctx.engine
    blocked = [c for c in engine.clients.values() if c.blocked is not None]
    return [
        f"connected_clients:{len(engine.clients)}",
        "cluster_connections:0",
        f"maxclients:{ctx.config['maxclients']}",
        f"blocked_clients:{len(blocked)}",
        "tracking_clients:0",
        f"clients_in_timeout_table:{sum(1 for c in blocked if c.blocked.blocked.timeout_ms > 0)}",
    ]


def _section_memory(ctx: Ctx) -> list[str]:
    rss = _rss_bytes()
    peak = max(rss, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    total = _total_memory()
    return [
        f"used_memory:{rss}",
        f"used_memory_human:{bytes_to_human(rss)}",
        f"used_memory_rss:{rss}",
        f"used_memory_rss_human:{bytes_to_human(rss)}",
        f"used_memory_peak:{peak}",
        f"used_memory_peak_human:{bytes_to_human(peak)}",
        f"total_system_memory:{total}",
        f"total_system_memory_human:{bytes_to_human(total)}",
        "maxmemory:0",
        "maxmemory_human:0B",
        "maxmemory_policy:noeviction",
        "mem_allocator:pymalloc",
    ]


def _section_persistence(ctx: Ctx) -> list[str]:
    return [
        "loading:0",
        "async_loading:0",
        *rdb_info_lines(ctx),
        *aof_info_lines(ctx),
    ]


def _section_stats(ctx: Ctx) -> list[str]:
    stats = ctx.engine.stats
    return [
        f"total_connections_received:{stats['total_connections_received']}",
        f"total_commands_processed:{stats['total_commands_processed']}",
        f"rejected_connections:{stats['rejected_connections']}",
        f"expired_keys:{stats['expired_keys']}",
        "evicted_keys:0",
        f"keyspace_hits:{stats['keyspace_hits']}",
        f"keyspace_misses:{stats['keyspace_misses']}",
        "pubsub_channels:0",
        "pubsub_patterns:0",
        f"unexpected_error_replies:{stats['unexpected_error_replies']}",
        f"total_error_replies:{stats['total_error_replies']}",
        *(f"{k}:{v}" for k, v in stats.items() if k not in _STATS_SHOWN),
    ]


_STATS_SHOWN = {
    "total_connections_received", "total_commands_processed", "rejected_connections",
    "expired_keys", "keyspace_hits", "keyspace_misses", "unexpected_error_replies",
    "total_error_replies",
}


def _section_replication(ctx: Ctx) -> list[str]:
    return [
        "role:master",
        "connected_slaves:0",
        "master_failover_state:no-failover",
        f"master_replid:{ctx.engine.run_id}",
        "master_replid2:0000000000000000000000000000000000000000",
        "master_repl_offset:0",
        "second_repl_offset:-1",
        "repl_backlog_active:0",
        "repl_backlog_size:1048576",
        "repl_backlog_first_byte_offset:0",
        "repl_backlog_histlen:0",
    ]


def _section_cpu(ctx: Ctx) -> list[str]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    thread = getattr(resource, "RUSAGE_THREAD", None)
    main = resource.getrusage(thread) if thread is not None else me
    return [
        f"used_cpu_sys:{me.ru_stime:.6f}",
        f"used_cpu_user:{me.ru_utime:.6f}",
        f"used_cpu_sys_children:{children.ru_stime:.6f}",
        f"used_cpu_user_children:{children.ru_utime:.6f}",
        f"used_cpu_sys_main_thread:{main.ru_stime:.6f}",
        f"used_cpu_user_main_thread:{main.ru_utime:.6f}",
    ]


def _section_commandstats(ctx: Ctx) -> list[str]:
    # Calls are counted; time per command is not measured, so usec reads 0.
    return [f"cmdstat_{name}:calls={calls},usec=0,usec_per_call=0.00,rejected_calls=0,"
            f"failed_calls=0" for name, calls in ctx.engine.command_calls.items()]


def _section_cluster(ctx: Ctx) -> list[str]:
    return ["cluster_enabled:0"]


def _section_keyspace(ctx: Ctx) -> list[str]:
    lines = []
    now = ctx.now_ms()
    for db in ctx.engine.dbs:
        if not len(db):
            continue
        expires = db.expires
        avg_ttl = sum(max(0, w - now) for w in expires.values()) // len(expires) if expires else 0
        lines.append(f"db{db.index}:keys={len(db)},expires={len(expires)},avg_ttl={avg_ttl}")
    return lines


def _empty(ctx: Ctx) -> list[str]:
    return []


# (name as asked, header, generator, in "default")
_SECTIONS = [
    ("server", "Server", _section_server, True),
    ("clients", "Clients", _section_clients, True),
    ("memory", "Memory", _section_memory, True),
    ("persistence", "Persistence", _section_persistence, True),
    ("stats", "Stats", _section_stats, True),
    ("replication", "Replication", _section_replication, True),
    ("cpu", "CPU", _section_cpu, True),
    ("modules", "Modules", _empty, True),
    ("commandstats", "Commandstats", _section_commandstats, False),
    ("errorstats", "Errorstats", _empty, True),
    ("latencystats", "Latencystats", _empty, False),
    ("cluster", "Cluster", _section_cluster, True),
    ("keyspace", "Keyspace", _section_keyspace, True),
]


def info_text(ctx: Ctx, wanted: list[bytes]) -> bytes:
    """The INFO report for the requested sections (Redis's selection rules)."""
    names = {w.decode("latin-1").lower() for w in wanted} or {"default"}
    everything = bool(names & {"all", "everything"})
    default = "default" in names
    parts = []
    for name, header, generate, in_default in _SECTIONS:
        if everything or name in names or (default and in_default):
            parts.append("".join(f"{line}\r\n" for line in [f"# {header}", *generate(ctx)]))
    return "\r\n".join(parts).encode()


@command("info", arity=-1, flags="loading stale", group="server", since="1.0.0",
         complexity="O(1)", summary="Get information and statistics about the server",
         categories=("@dangerous",))
def info(ctx: Ctx, argv: list[bytes]) -> object:
    """INFO [section [section ...]]"""
    return Verbatim(info_text(ctx, argv[1:]))


# =====================================================================================
# DBSIZE, FLUSHDB, FLUSHALL, TIME
# =====================================================================================
@command("dbsize", arity=1, flags="readonly fast", group="server", since="1.0.0",
         complexity="O(1)", summary="Return the number of keys in the selected database",
         categories=("@keyspace",))
def dbsize(ctx: Ctx, argv: list[bytes]) -> object:
    """DBSIZE"""
    return len(ctx.db)


def _wake_waiters(ctx: Ctx, db_index: int) -> None:
    """Retry the clients blocked on keys of a database being emptied: a
    blocked XREADGROUP fails now that its key is gone (Redis 7.2+)."""
    engine = ctx.engine
    for waited_db, key in list(engine.waiters):
        if waited_db == db_index:
            engine.signal_ready(waited_db, key)


def _flush_mode(argv: list[bytes]) -> None:
    if len(argv) > 2 or (len(argv) == 2 and argv[1].upper() not in (b"ASYNC", b"SYNC")):
        raise CommandError(SYNTAX)


@command("flushdb", arity=-1, flags="write", group="server", since="1.0.0",
         complexity="O(N) where N is the number of keys in the selected database",
         summary="Remove all keys from the current database",
         categories=("@keyspace", "@dangerous"))
def flushdb(ctx: Ctx, argv: list[bytes]) -> object:
    """FLUSHDB [ASYNC | SYNC]"""
    _flush_mode(argv)
    _wake_waiters(ctx, ctx.db.index)
    ctx.changes += ctx.db.flush()
    ctx.propagate(list(argv))  # always, even when nothing was there (as Redis)
    return OK


@command("flushall", arity=-1, flags="write", group="server", since="1.0.0",
         complexity="O(N) where N is the total number of keys in all databases",
         summary="Remove all keys from all databases", categories=("@keyspace", "@dangerous"))
def flushall(ctx: Ctx, argv: list[bytes]) -> object:
    """FLUSHALL [ASYNC | SYNC]"""
    _flush_mode(argv)
    for db in ctx.engine.dbs:
        _wake_waiters(ctx, db.index)
        ctx.changes += db.flush()
    ctx.propagate(list(argv))
    return OK


@command("time", arity=1, flags="loading stale fast", group="server", since="2.6.0",
         complexity="O(1)", summary="Return the current server time")
def time_(ctx: Ctx, argv: list[bytes]) -> object:
    """TIME"""
    seconds, micros = divmod(ctx.engine.clock.now_us(), 1_000_000)
    return [str(seconds).encode(), str(micros).encode()]


# =====================================================================================
# MEMORY
# =====================================================================================
def _jemalloc_size(n: int) -> int:
    """The jemalloc size class an allocation of n bytes lands in."""
    if n <= 8:
        return 8
    if n <= 128:
        return (n + 15) // 16 * 16
    step = 1 << (n - 1).bit_length() - 3  # four classes per doubling
    return (n + step - 1) // step * step


def _sds_size(length: int, embedded: bool = False) -> int:
    if embedded or 32 <= length < 256:
        header = 3
    elif length < 32:
        header = 1
    elif length < 65536:
        header = 5
    elif length < 2**32:
        header = 9
    else:
        header = 17
    return header + length + 1


def memory_usage(key: bytes, value: Any) -> int:
    """MEMORY USAGE: the bytes Redis would use for this key and value (its
    robj/sds/jemalloc layout for strings; the stream's own estimate)."""
    overhead = _jemalloc_size(_sds_size(len(key))) + 24  # the key's sds + the dict entry
    if isinstance(value, Stream):
        return value.memory_usage() + overhead
    encoding = object_encoding(value)
    if encoding == b"int":
        size = 16
    elif encoding == b"embstr":
        size = _jemalloc_size(16 + _sds_size(len(value), embedded=True))
    else:
        size = 16 + _jemalloc_size(_sds_size(len(value)))
    return size + overhead


@command("memory", arity=-2, group="server", since="4.0.0", complexity="Depends on subcommand.",
         summary="A container for memory diagnostics commands", container=True)
def memory_(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY subcommand [argument ...]"""


@command("memory|usage", arity=-3, flags="readonly", keys=(2, 2, 1), group="server",
         since="4.0.0", complexity="O(N) where N is the number of samples.",
         summary="Estimate the memory usage of a key")
def memory_usage_(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY USAGE key [SAMPLES count]"""
    i = 3
    while i < len(argv):
        if argv[i].upper() == b"SAMPLES" and i + 1 < len(argv):
            if parse_int(argv[i + 1]) < 0:
                raise CommandError(SYNTAX)
            i += 2  # every entry is counted exactly: sampling changes nothing
        else:
            raise CommandError(SYNTAX)
    value = ctx.db.peek(argv[2])
    return None if value is None else memory_usage(argv[2], value)


_MEMORY_HELP = [
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
]


@command("memory|help", arity=2, flags="loading stale", group="server", since="4.0.0",
         complexity="O(1)", summary="Show helpful text about the different subcommands")
def memory_help(ctx: Ctx, argv: list[bytes]) -> object:
    """MEMORY HELP"""
    return help_reply(_MEMORY_HELP)


# =====================================================================================
# DEBUG
# =====================================================================================
def _c_atof(arg: bytes) -> float:
    """strtod's reading: the longest numeric prefix, 0 when there is none."""
    text = arg.decode("latin-1").strip()
    for end in range(len(text), 0, -1):
        try:
            return float(text[:end])
        except ValueError:
            continue
    return 0.0


def _c_atoi(arg: bytes) -> int:
    text = arg.decode("latin-1").strip()
    digits = ""
    for i, c in enumerate(text):
        if c.isdigit() or (i == 0 and c in "+-"):
            digits += c
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return 0


def _serialized_length(value: Any) -> int:
    """An estimate of the RDB encoding's size (DEBUG OBJECT serializedlength)."""
    if isinstance(value, Stream):
        return sum(len(blob) + 16 for _, blob in value.nodes()) + 16
    number = None
    if len(value) <= 11:
        try:
            number = parse_int(value)
        except CommandError:
            pass
    if number is not None:
        if -(1 << 7) <= number < (1 << 7):
            return 2
        if -(1 << 15) <= number < (1 << 15):
            return 3
        if -(1 << 31) <= number < (1 << 31):
            return 5
    n = len(value)
    prefix = 1 if n < 64 else 2 if n < 16384 else 5 if n < 2**32 else 9
    return prefix + n


def _debug_object(ctx: Ctx, key: bytes) -> object:
    value = ctx.db.peek(key)
    if value is None:
        raise CommandError(NO_SUCH_KEY)
    access = ctx.db.access.get(key, ctx.now_ms())
    encoding = object_encoding(value).decode()
    return SimpleString((
        f"Value at:{id(value):#x} refcount:{refcount(value)} encoding:{encoding} "
        f"serializedlength:{_serialized_length(value)} lru:{(access // 1000) & ((1 << 24) - 1)} "
        f"lru_seconds_idle:{idle_seconds(ctx, key)}").encode())


_DEBUG_HELP = [
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "RELOAD [NOSAVE]",
    "    Save the RDB on disk and reload it back to memory. NOSAVE: skip the save.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "HELP",
    "    Prints this help.",
]


@command("debug", arity=-2, flags="admin noscript loading stale", group="server",
         since="1.0.0", complexity="Depends on subcommand.",
         summary="A container for debugging commands")
def debug(ctx: Ctx, argv: list[bytes]) -> object:
    """DEBUG subcommand [argument ...]"""
    sub = argv[1].lower()
    argc = len(argv)
    if sub == b"help" and argc == 2:
        return help_reply(_DEBUG_HELP)
    if sub == b"sleep" and argc == 3:
        # Stops the whole server, as in Redis: that is what tests use it for.
        time.sleep(max(0.0, _c_atof(argv[2])))
        return OK
    if sub == b"object" and argc == 3:
        return _debug_object(ctx, argv[2])
    if sub == b"set-active-expire" and argc == 3:
        ctx.engine.active_expire = bool(_c_atoi(argv[2]))
        return OK
    if sub == b"reload":
        return debug_reload(ctx, argv)
    if sub == b"loadaof" and argc == 2:
        return debug_loadaof(ctx)
    if sub == b"change-repl-id" and argc == 2:
        # Until replication exists the run id doubles as the replication id.
        ctx.engine.run_id = os.urandom(20).hex()
        return OK
    raise debug_unknown_subcommand(argv[1])


# =====================================================================================
# SHUTDOWN
# =====================================================================================
@command("shutdown", arity=-1, flags="admin noscript loading stale no_multi allow_busy",
         group="server", since="1.0.0",
         complexity="O(N) when saving, where N is the total number of keys in all databases "
                    "when saving data, otherwise O(1)",
         summary="Synchronously save the dataset to disk and then shut down the server")
def shutdown(ctx: Ctx, argv: list[bytes]) -> object:
    """SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]"""
    flags = set()
    for arg in argv[1:]:
        upper = arg.upper()
        if upper not in (b"NOSAVE", b"SAVE", b"NOW", b"FORCE", b"ABORT"):
            raise CommandError(SYNTAX)
        flags.add(upper)
    if (b"ABORT" in flags and len(flags) > 1) or {b"NOSAVE", b"SAVE"} <= flags:
        raise CommandError(SYNTAX)
    if b"ABORT" in flags:
        raise CommandError(NO_SHUTDOWN_IN_PROGRESS)  # shutting down never waits here
    hook = ctx.engine.shutdown_hook
    if hook is None:
        raise CommandError(SHUTDOWN_FAILED)
    log.warning("User requested shutdown...")
    if not shutdown_save(ctx, flags):
        raise CommandError(SHUTDOWN_FAILED)
    hook()
    # Redis exits without answering: the client sees the connection close.
    ctx.client.close_after_reply = True
    return RawReply(b"")
