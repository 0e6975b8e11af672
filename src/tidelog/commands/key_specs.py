"""Where a command's keys are, and what it does with them.

Redis 7 describes each command's keys with *key specs* (COMMAND INFO's tenth
element): where the search for keys begins (an index, or the keyword keys
follow, as XREAD's ``STREAMS``), how keys are found from there (a range, or
a count argument, as EVAL's ``numkeys``), and flags saying what the command
does with each key (``RO``/``RW``/``OW``/``RM``; ``access``, ``insert``,
``update``, ``delete``).  COMMAND INFO and COMMAND GETKEYS show them, and ACL
reads them to tell which keys a command touches and whether it reads or
writes them (:func:`acl_keys`).

The table (:mod:`.table`) says where keys are but not the flags; what it
does not say -- the flags, and COMMAND INFO's *tips* -- is in
:data:`COMMAND_EXTRAS`, written from what redis-server 7.0.15 answers to
``COMMAND INFO`` (and from Redis 8's command pages for the newer commands);
a command without an entry gets a key spec derived from its flags.  The
families add their own entries (``COMMAND_EXTRAS.update``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .table import CommandSpec


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


def ks(flags: str, begin: int | str | None, lastkey: int = 0, keystep: int = 1,
        limit: int = 0, startfrom: int = 1, notes: str | None = None,
        keynum: tuple[int, int, int] | None = None, find: Any = None) -> KeySpec:
    return KeySpec(tuple(flags.split()), begin, lastkey, keystep, limit, startfrom, notes,
                   keynum, find)


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


_SORT_BY_GET = ks("RO access", None, notes="For the optional BY/GET keyword. It is marked "
                   "'unknown' because the key names derive from the content of the key we sort")
_SORT_STORE = ks("OW update", None, notes="For the optional STORE keyword. It is marked "
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
    "ssubscribe": ((), [ks("not_key", 1, -1)]),
    "sunsubscribe": ((), [ks("not_key", 1, -1)]),
    "spublish": ((), [ks("not_key", 1)]),
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
            [ks("RM delete", 1, -1)]),
    "unlink": (("request_policy:multi_shard", "response_policy:agg_sum"),
               [ks("RM delete", 1, -1)]),
    "exists": (("request_policy:multi_shard", "response_policy:agg_sum"), [ks("RO", 1, -1)]),
    "type": ((), [ks("RO", 1)]),
    "keys": ((_ALL_SHARDS, "nondeterministic_output_order"), None),
    "scan": ((_ND, "request_policy:special"), None),
    "rename": ((), [ks("RW access delete", 1), ks("OW update", 2)]),
    "renamenx": ((), [ks("RW access delete", 1), ks("OW insert", 2)]),
    "copy": ((), [ks("RO access", 1), ks("OW update", 2)]),
    "move": ((), [ks("RW access update", 1)]),
    "touch": (("request_policy:multi_shard", "response_policy:agg_sum"), [ks("RO", 1, -1)]),
    "randomkey": ((_ALL_SHARDS, _ND), None),
    "dump": ((_ND,), None),
    "restore": ((), [ks("OW update", 1)]),
    "sort": ((), [ks("RO access", 1), _SORT_BY_GET, _SORT_STORE]),
    "sort_ro": ((), [ks("RO access", 1), _SORT_BY_GET]),
    "ttl": ((_ND,), None),
    "pttl": ((_ND,), None),
    "flushdb": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "flushall": ((_ALL_SHARDS, "response_policy:all_succeeded"), None),
    "time": ((_ND,), None),
    "lastsave": ((_ND,), None),
    "object|encoding": ((_ND,), [ks("RO", 2)]),
    "object|refcount": ((_ND,), [ks("RO", 2)]),
    "object|idletime": ((_ND,), [ks("RO", 2)]),
    "object|freq": ((_ND,), [ks("RO", 2)]),
    "memory|usage": ((), [ks("RO", 2)]),
    "set": ((), [ks("RW access update variable_flags", 1,
                     notes="RW and ACCESS due to the optional `GET` argument")]),
    "mget": (("request_policy:multi_shard",), None),
    "incr": ((), [ks("RW access update", 1)]),
    "decr": ((), [ks("RW access update", 1)]),
    "incrby": ((), [ks("RW access update", 1)]),
    "decrby": ((), [ks("RW access update", 1)]),
    "setnx": ((), [ks("OW insert", 1)]),
    "setex": ((), [ks("OW update", 1)]),
    "psetex": ((), [ks("OW update", 1)]),
    "getset": ((), [ks("RW access update", 1)]),
    "getdel": ((), [ks("RW access delete", 1)]),
    "getex": ((), [ks("RW access update", 1,
                       notes="RW and UPDATE because it changes the TTL")]),
    "mset": (("request_policy:multi_shard", "response_policy:all_succeeded"),
             [ks("OW update", 1, -1, 2)]),
    "msetnx": (("request_policy:multi_shard", "response_policy:agg_min"),
               [ks("OW insert", 1, -1, 2)]),
    "msetex": ((), [ks("OW update", 1, keynum=(0, 1, 2))]),
    "delex": ((), [ks("RW delete", 1)]),
    "digest": ((), [ks("RO", 1)]),
    "incrbyfloat": ((), [ks("RW access update", 1)]),
    "increx": ((), [ks("RW access update", 1)]),
    "append": ((), [ks("RW insert", 1)]),
    "strlen": ((), [ks("RO", 1)]),
    "setrange": ((), [ks("RW update", 1)]),
    "lcs": ((), [ks("RO access", 1, 1)]),
    "watch": ((), [ks("RO", 1, -1)]),
    # streams
    "xadd": ((_ND,), [ks("RW update", 1,
                          notes="UPDATE instead of INSERT because of the optional trimming feature")]),
    "xread": ((), [ks("RO access", "STREAMS", -1, 1, 2, startfrom=1)]),
    "xreadgroup": ((), [ks("RO access", "STREAMS", -1, 1, 2, startfrom=4)]),
    "xgroup|create": ((), [ks("RW insert", 2)]),
    "xgroup|createconsumer": ((), [ks("RW insert", 2)]),
    "xgroup|destroy": ((), [ks("RW delete", 2)]),
    "xgroup|delconsumer": ((), [ks("RW delete", 2)]),
    "xinfo|consumers": ((_ND,), None),
    "xclaim": ((_ND,), None),
    "xautoclaim": ((_ND,), [ks("RW delete", 1)]),
    "xpending": ((_ND,), None),
    "xdel": ((), [ks("RW delete", 1)]),
    "xtrim": ((_ND,), [ks("RW delete", 1)]),
    "xlen": ((), [ks("RO", 1)]),
    # lists
    **{name: ((), [ks("RW insert", 1)]) for name in ("lpush", "rpush", "lpushx", "rpushx",
                                                         "linsert")},
    **{name: ((), [ks("RW access delete", 1)]) for name in ("lpop", "rpop")},
    "llen": ((), [ks("RO", 1)]),
    **{name: ((), [ks("RO access", 1)]) for name in ("lrange", "lindex", "lpos")},
    "lset": ((), [ks("RW update", 1)]),
    "lrem": ((), [ks("RW delete", 1)]),
    "ltrim": ((), [ks("RW delete", 1)]),
    **{name: ((), [ks("RW access delete", 1), ks("RW insert", 2)])
       for name in ("lmove", "rpoplpush", "blmove", "brpoplpush", "lmovem", "blmovem")},
    **{name: ((), [ks("RW access delete", 1, -2)]) for name in ("blpop", "brpop")},
    "lmpop": ((), [ks("RW access delete", 1, keynum=(0, 1, 1))]),
    "eval": ((), [ks("RW access update", 2, keynum=(0, 1, 1), notes=_SCRIPT_RW)]),
    "evalsha": ((), [ks("RW access update", 2, keynum=(0, 1, 1))]),
    "eval_ro": ((), [ks("RO access", 2, keynum=(0, 1, 1), notes=_SCRIPT_RO)]),
    "evalsha_ro": ((), [ks("RO access", 2, keynum=(0, 1, 1))]),
    "fcall": ((), [ks("RW access update", 2, keynum=(0, 1, 1), notes=_SCRIPT_RW)]),
    "fcall_ro": ((), [ks("RO access", 2, keynum=(0, 1, 1), notes=_SCRIPT_RO)]),
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
    "blmpop": ((), [ks("RW access delete", 2, keynum=(0, 1, 1))]),
}


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
    return [ks(flags, spec.first_key, last, spec.key_step or 1)]



def _keyword_keys(ks: KeySpec, argv: list[bytes]) -> list[int]:
    """Key positions for a keyword key spec (XREAD ... STREAMS k1 k2 id1 id2),
    as Redis's key specs find them: the first argument equal to the keyword
    (any case) from ``startfrom`` on, then the first 1/limit of what
    follows it (rounded down: ``STREAMS a b 0`` has the key ``a``)."""
    keyword = ks.begin.encode().upper()  # type: ignore[union-attr]
    for i in range(ks.startfrom, len(argv)):
        if argv[i].upper() == keyword:
            if ks.lastkey >= 0:  # a fixed number of keys (GEORADIUS ... STORE key)
                return list(range(i + 1, min(i + 2 + ks.lastkey, len(argv))))
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


# Commands that find their keys themselves (Redis's getkeys_proc), where the
# key specs alone would give too many: name -> argv -> key positions.  The
# first key spec's flags go with each key.
KEY_FINDERS: dict[str, Callable[[list[bytes]], list[int]]] = {}


def fixed_key_ranges(spec: CommandSpec) -> list[tuple[int, int, int]] | None:
    """Where a command's keys sit when every key spec gives fixed positions
    (an index to begin and a range to find): ``(begin, lastkey, keystep)``
    per key spec, ``not_key`` ones left out.  None when one searches by a
    keyword, counts its keys, has a finder of its own or the command finds
    its keys itself (KEY_FINDERS, XREAD's STREAMS): then
    :func:`acl_keys` must find them per call.  O(key specs); callers keep
    the answer per command."""
    if spec.name in KEY_FINDERS or spec.name in ("xread", "xreadgroup"):
        return None
    ranges = []
    for ks in key_specs(spec):
        if not isinstance(ks.begin, int) or ks.keynum is not None or ks.find is not None:
            return None
        if "not_key" not in ks.flags:
            ranges.append((ks.begin, ks.lastkey, ks.keystep))
    return ranges


def command_key_positions(spec: CommandSpec, argv: list[bytes]) -> list[tuple[int, KeySpec]]:
    """(argv index, key spec) of every key in a full command."""
    finder = KEY_FINDERS.get(spec.name)
    if finder is not None:
        first_spec = key_specs(spec)[0]
        return [(i, first_spec) for i in finder(argv)]
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



def call_flags(spec: CommandSpec, ks: KeySpec, argv: list[bytes]) -> tuple[str, ...]:
    """The flags of a key in this call: the key spec's, unless it says
    ``variable_flags`` (SET only reads the old value with GET, an option
    after key and value; BITFIELD of GETs only reads)."""
    if "variable_flags" in ks.flags and spec.name == "set":
        get = any(a.upper() == b"GET" for a in argv[3:])
        return ("RW", "access", "update") if get else ("OW", "update")
    if "variable_flags" in ks.flags and spec.name == "bitfield":
        return ("RO", "access") if _bitfield_reads_only(argv) else ("RW", "access", "update")
    return ks.flags


def _bitfield_reads_only(argv: list[bytes]) -> bool:
    """Whether a BITFIELD call has only GETs (and OVERFLOWs), read as Redis's
    key finder reads it: anything it cannot read counts as a write."""
    i = 2
    while i < len(argv):
        word, left = argv[i].upper(), len(argv) - i - 1
        if word == b"GET" and left >= 2:
            i += 3
        elif word == b"OVERFLOW" and left >= 1:
            i += 2
        else:
            return False
    return True


# -- ACL ----------------------------------------------------------------------------
# What a key asks of a user's key patterns: %R~ (read), %W~ (write), ~ (both).
KEY_READ, KEY_WRITE = 1, 2

# XREAD/XREADGROUP options before STREAMS, and how many arguments each takes.
_XREAD_OPTIONS = {b"COUNT": 1, b"BLOCK": 1, b"MAXCOUNT": 1, b"MAXSIZE": 1, b"CLAIM": 1,
                  b"GROUP": 2, b"NOACK": 0}


def _permission(flags: tuple[str, ...]) -> int:
    """A key spec's flags as ACL reads them: ``access`` needs read, ``insert``,
    ``update`` and ``delete`` need write; a key with none of them (EXISTS,
    TYPE: metadata only) needs just to match some pattern."""
    perm = KEY_READ if "access" in flags else 0
    if "insert" in flags or "update" in flags or "delete" in flags:
        perm |= KEY_WRITE
    return perm


def _xread_keys(argv: list[bytes]) -> list[int]:
    """XREAD/XREADGROUP's keys as Redis 8's ACL finds them: the options are
    skipped with their arguments to reach the STREAMS keyword, so a group,
    consumer or option value spelled ``STREAMS`` is never taken for it
    (redis/redis#15478, in 7.2.16, 7.4.11, 8.4.6, 8.6.6, 8.8.2); then the
    first half of what follows."""
    i = 1
    while i < len(argv):
        word = argv[i].upper()
        if word == b"STREAMS":
            rest = len(argv) - i - 1
            if rest == 0 or rest % 2:
                return []
            return list(range(i + 1, i + 1 + rest // 2))
        skip = _XREAD_OPTIONS.get(word)
        if skip is None:
            return []
        i += 1 + skip
    return []


def acl_keys(spec: CommandSpec, argv: list[bytes]) -> list[tuple[int, int]]:
    """``(argv index, KEY_READ | KEY_WRITE)`` of every key ``argv`` names,
    as ACL checks them: the key specs (shard channels, ``not_key``, are not
    keys), with SET's flags by whether it has GET, and XREAD/XREADGROUP's
    keys found by parsing their options.  O(len(argv))."""
    if spec.name in ("xread", "xreadgroup"):
        return [(i, KEY_READ) for i in _xread_keys(argv)]
    found = []
    for i, ks in command_key_positions(spec, argv):
        if "not_key" not in ks.flags:
            found.append((i, _permission(call_flags(spec, ks, argv))))
    return found
