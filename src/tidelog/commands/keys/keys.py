"""Keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RENAME, RENAMENX,
the EXPIRE family, TTL/PTTL, EXPIRETIME/PEXPIRETIME, PERSIST and OBJECT.

They work on any value type.  Expiry deadlines are absolute Unix
milliseconds (``Database.expires``); every command that sets one from a
relative time propagates ``PEXPIREAT key <ms>`` so that replicas and the
AOF agree on the instant, and a deadline already in the past deletes the
key and propagates ``DEL``, as Redis does.

:func:`glob_match` is Redis's ``stringmatchlen`` pattern language, used by
KEYS, SCAN MATCH and CONFIG GET.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC, NOTIFY_KEY_MISS
from ...errors import (
    EXPIRE_GT_LT,
    EXPIRE_NX_XX_GT_LT,
    INVALID_CURSOR,
    LFU_NOT_SELECTED,
    LFU_SELECTED,
    NO_SUCH_KEY,
    SYNTAX,
    WRONGTYPE,
    CommandError,
    invalid_expire,
    unsupported_option,
)
from ...glob import glob_match
from ...keyspace import type_name
from ...resp.replies import OK, SimpleString
from ..args import INT64_MAX, INT64_MIN, ArgReader, parse_int
from ..replies import help_reply
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx

# -- lookups that count keyspace hits and misses (INFO stats) -------------------------


def lookup_read(ctx: Ctx, key: bytes, touch: bool = True, notify: bool = True) -> Any:
    """The live value at key (None if missing), counted in keyspace_hits/misses;
    a miss is a ``keymiss`` event (unless ``notify`` is False, as OBJECT's)."""
    value = ctx.db.get(key) if touch else ctx.db.peek(key)
    if value is not None:
        ctx.engine.stats["keyspace_hits"] += 1
    else:
        ctx.engine.stats["keyspace_misses"] += 1
        if notify:
            ctx.notify(NOTIFY_KEY_MISS, b"keymiss", key)
    return value


def lookup_read_typed(ctx: Ctx, key: bytes, cls: type) -> Any:
    """:func:`lookup_read` of a value of type ``cls``: None if missing,
    WRONGTYPE for another type."""
    value = lookup_read(ctx, key)
    if value is None or type(value) is cls:
        return value
    raise CommandError(WRONGTYPE)


# -- DEL, UNLINK, EXISTS, TYPE -------------------------------------------------------
def key_arguments(argv: list[bytes]) -> list[bytes]:
    """``key [key ...]``: every argument after the command name (the table's
    arity asks for one at least; nothing can be left over, so no cursor: a
    slice costs a fifth of one)."""
    return argv[1:]


# Redis's LAZYFREE_THRESHOLD: a value of more allocations than this (by
# lazyfree_effort's estimate) is freed lazily; smaller ones at once.
LAZYFREE_THRESHOLD = 64


def lazyfree_effort(value: Any) -> int:
    """Redis's estimate of the allocations freeing a value costs: one for a
    string or a compact (listpack, intset) value, the elements of a hash
    table or skiplist, a quicklist's nodes (taken as 128 elements each),
    and for a stream its nodes plus, per consumer group, one and the first
    group's PEL size.  O(1) (O(G) for a stream's G groups)."""
    if type(value) is bytes:
        return 1
    encoding = value.object_encoding()
    if encoding in (b"hashtable", b"skiplist"):
        return len(value)
    if encoding == b"quicklist":
        return len(value) // 128 + 1
    if encoding == b"stream":
        effort = value.node_count
        if value.groups:
            first = next(iter(value.groups.values()))
            effort += len(value.groups) * (1 + len(first.pel))
        return effort
    return 1


def _delete_keys(ctx: Ctx, keys: list[bytes], lazy: bool = False) -> int:
    deleted = 0
    for key in keys:
        value = ctx.db.peek(key) if lazy else None
        if ctx.db.delete(key):
            if value is not None and lazyfree_effort(value) > LAZYFREE_THRESHOLD:
                ctx.engine.free_later(value)
            ctx.modified(key)
            ctx.ready(key)
            ctx.notify(NOTIFY_GENERIC, b"del", key)
            deleted += 1
    if deleted:
        ctx.propagate_argv()
    return deleted


@command("del", arity=-2, flags="write", keys=(1, -1, 1), group="generic", since="1.0.0",
         complexity="O(N) where N is the number of keys that will be removed. When a key to "
                    "remove holds a value other than a string, the individual complexity for this "
                    "key is O(M) where M is the number of elements in the list, set, sorted set or "
                    "hash. Removing a single key that holds a string value is O(1).",
         summary="Delete a key")
def del_(ctx: Ctx, argv: list[bytes]) -> object:
    """DEL key [key ...]"""
    return _delete_keys(ctx, key_arguments(argv), ctx.config["lazyfree-lazy-user-del"])


@command("unlink", arity=-2, flags="write fast", keys=(1, -1, 1), group="generic",
         since="4.0.0",
         complexity="O(1) for each key removed regardless of its size. Then the command does "
                    "O(N) work in a different thread in order to reclaim memory, where N is the "
                    "number of allocations the deleted objects where composed of.",
         summary="Delete a key asynchronously in another thread. Otherwise it is just as DEL, "
                 "but non blocking.")
def unlink(ctx: Ctx, argv: list[bytes]) -> object:
    """UNLINK key [key ...]"""
    # A large value is freed after the reply (Engine.free_later), not in
    # another thread: the client does not wait for it.
    return _delete_keys(ctx, key_arguments(argv), lazy=True)


@command("exists", arity=-2, flags="readonly fast", keys=(1, -1, 1), group="generic",
         since="1.0.0", complexity="O(N) where N is the number of keys to check.",
         summary="Determine if a key exists")
def exists(ctx: Ctx, argv: list[bytes]) -> object:
    """EXISTS key [key ...]"""
    return sum(1 for key in key_arguments(argv) if lookup_read(ctx, key, touch=False) is not None)


@command("type", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="1.0.0", complexity="O(1)", summary="Determine the type stored at key")
def type_(ctx: Ctx, argv: list[bytes]) -> object:
    """TYPE key"""
    value = lookup_read(ctx, argv[1], touch=False)
    return SimpleString(b"none" if value is None else type_name(value))


# -- KEYS, SCAN -------------------------------------------------------------------
@command("keys", arity=2, flags="readonly", group="generic", since="1.0.0",
         categories=("@dangerous",),
         complexity="O(N) with N being the number of keys in the database, under the "
                    "assumption that the key names in the database and the given pattern have "
                    "limited length.",
         summary="Find all keys matching the given pattern")
def keys(ctx: Ctx, argv: list[bytes]) -> object:
    """KEYS pattern"""
    pattern = argv[1]
    return [key for key in ctx.db.keys() if glob_match(pattern, key)]


_U64 = 1 << 64


def parse_cursor(arg: bytes) -> int:
    """A SCAN cursor as Redis reads it (strtoull): an unsigned 64-bit decimal,
    optionally signed ("-1" wraps to 2**64-1), "" reads as 0."""
    if arg[:1] in (b" ", b"\t", b"\n", b"\v", b"\f", b"\r"):
        raise CommandError(INVALID_CURSOR)
    digits = arg[1:] if arg[:1] in (b"+", b"-") else arg
    if not digits:
        if arg:
            raise CommandError(INVALID_CURSOR)
        return 0
    if not digits.isdigit():
        raise CommandError(INVALID_CURSOR)
    value = int(digits)
    if value >= _U64:
        raise CommandError(INVALID_CURSOR)
    return (-value) % _U64 if arg[:1] == b"-" else value


@dataclass(slots=True)
class ScanOptions:
    """SCAN's, HSCAN's, SSCAN's and ZSCAN's options after the cursor."""

    count: int = 10
    pattern: bytes | None = None      # MATCH; None: every element (also for MATCH *)
    type_filter: bytes | None = None  # SCAN ... TYPE, lower case
    keys_only: bool = False           # HSCAN NOVALUES (7.4), ZSCAN NOSCORES (8.0)


def parse_scan_options(argv: list[bytes], start: int, *, type_option: bool = False,
                       keys_only_word: bytes | None = None) -> ScanOptions:
    """The options from ``argv[start]`` on, in any order, each error Redis's
    ``syntax error`` (a COUNT below 1 too; a COUNT that is no integer: the
    integer error).  TYPE is SCAN's; ``keys_only_word`` the flag that leaves
    the values out (HSCAN's NOVALUES, ZSCAN's NOSCORES)."""
    opts = ScanOptions()
    r = ArgReader(argv, start)
    while r.more():
        option = r.next_upper()
        if option == keys_only_word:
            opts.keys_only = True
            continue
        if not r.more():
            raise CommandError(SYNTAX)
        if option == b"COUNT":
            opts.count = r.next_int()
            if opts.count < 1:
                raise CommandError(SYNTAX)
        elif option == b"MATCH":
            pattern = r.next_bytes()
            opts.pattern = None if pattern == b"*" else pattern
        elif type_option and option == b"TYPE":
            opts.type_filter = r.next_bytes().lower()
        else:
            raise CommandError(SYNTAX)
    return opts


@command("scan", arity=-2, flags="readonly", group="generic", since="2.8.0",
         complexity="O(1) for every call, O(COUNT) keys looked at (at most 10*COUNT buckets). "
                    "O(N) for a complete iteration, including enough command calls for the cursor "
                    "to return back to 0. N is the number of elements inside the collection.",
         summary="Incrementally iterate the keys space")
def scan(ctx: Ctx, argv: list[bytes]) -> object:
    """SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]"""
    cursor = parse_cursor(argv[1])
    opts = parse_scan_options(argv, 2, type_option=True)
    count, pattern, type_filter = opts.count, opts.pattern, opts.type_filter
    db = ctx.db
    cursor, found = db.scan(cursor, count)
    keys = []
    for key in found:
        value = db.peek(key)  # expires the key if due
        if value is None:
            continue
        if pattern is not None and not glob_match(pattern, key):
            continue
        if type_filter is not None and type_name(value) != type_filter:
            continue
        keys.append(key)
    return [str(cursor).encode(), keys]


# -- RENAME -----------------------------------------------------------------------
def _rename(ctx: Ctx, argv: list[bytes], nx: bool) -> object:
    src, dst = argv[1], argv[2]
    db = ctx.db
    if db.get(src) is None:
        raise CommandError(NO_SUCH_KEY)
    if src == dst:
        return 0 if nx else OK
    if db.get(dst) is not None:
        if nx:
            return 0
    db.rename(src, dst)
    ctx.modified(src)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_GENERIC, b"rename_from", src)
    ctx.notify(NOTIFY_GENERIC, b"rename_to", dst)
    ctx.db.touch(dst)
    ctx.ready(src)
    ctx.ready(dst)
    return 1 if nx else OK


@command("rename", arity=3, flags="write", keys=(1, 2, 1), group="generic", since="1.0.0",
         complexity="O(1)", summary="Rename a key")
def rename(ctx: Ctx, argv: list[bytes]) -> object:
    """RENAME key newkey"""
    return _rename(ctx, argv, nx=False)


@command("renamenx", arity=3, flags="write fast", keys=(1, 2, 1), group="generic",
         since="1.0.0", complexity="O(1)", summary="Rename a key, only if the new key does not exist")
def renamenx(ctx: Ctx, argv: list[bytes]) -> object:
    """RENAMENX key newkey"""
    return _rename(ctx, argv, nx=True)


# -- EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT ------------------------------------------------
def _expire_flags(options: list[bytes]) -> set[bytes]:
    """The options after ``key time`` (NX, XX, GT, LT), as a set of upper-case names."""
    flags: set[bytes] = set()
    for option in options:
        upper = option.upper()
        if upper not in (b"NX", b"XX", b"GT", b"LT"):
            raise unsupported_option(option)
        flags.add(upper)
    if b"NX" in flags and len(flags) > 1:
        raise CommandError(EXPIRE_NX_XX_GT_LT)
    if b"GT" in flags and b"LT" in flags:
        raise CommandError(EXPIRE_GT_LT)
    return flags


def _expire(ctx: Ctx, argv: list[bytes], relative: bool, seconds: bool) -> int:
    """The EXPIRE family.  Cost: O(1) (plus O(log N) to file the deadline)."""
    r = ArgReader(argv)
    key, when_arg = r.next_bytes(), r.next_bytes()
    options = r.take(r.remaining())
    r.finish()
    flags = _expire_flags(options)  # checked before the time, as Redis does
    when = parse_int(when_arg)
    if seconds:
        if when > INT64_MAX // 1000 or when < -(-INT64_MIN // 1000):
            raise invalid_expire(argv[0])
        when *= 1000
    base = ctx.now_ms() if relative else 0
    if when > INT64_MAX - base:
        raise invalid_expire(argv[0])
    when += base
    db = ctx.db
    if db.get(key) is None:
        return 0
    current = db.expires.get(key)
    if b"NX" in flags and current is not None:
        return 0
    if b"XX" in flags and current is None:
        return 0
    if b"GT" in flags and (current is None or when <= current):
        return 0
    if b"LT" in flags and current is not None and when >= current:
        return 0
    if when <= ctx.now_ms():
        db.delete(key)
        ctx.modified(key)
        ctx.ready(key)
        ctx.effect([b"DEL", key])
        ctx.notify(NOTIFY_GENERIC, b"del", key)
        return 1
    db.set_expire(key, when)
    ctx.modified(key)
    ctx.effect([b"PEXPIREAT", key, str(when).encode(), *options])
    ctx.notify(NOTIFY_GENERIC, b"expire", key)
    return 1


_EXPIRE_COMPLEXITY = "O(1)"


@command("expire", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="1.0.0", complexity=_EXPIRE_COMPLEXITY, summary="Set a key's time to live in seconds")
def expire(ctx: Ctx, argv: list[bytes]) -> object:
    """EXPIRE key seconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=True, seconds=True)


@command("pexpire", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="2.6.0", complexity=_EXPIRE_COMPLEXITY,
         summary="Set a key's time to live in milliseconds")
def pexpire(ctx: Ctx, argv: list[bytes]) -> object:
    """PEXPIRE key milliseconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=True, seconds=False)


@command("expireat", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="1.2.0", complexity=_EXPIRE_COMPLEXITY,
         summary="Set the expiration for a key as a UNIX timestamp")
def expireat(ctx: Ctx, argv: list[bytes]) -> object:
    """EXPIREAT key unix-time-seconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=False, seconds=True)


@command("pexpireat", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="2.6.0", complexity=_EXPIRE_COMPLEXITY,
         summary="Set the expiration for a key as a UNIX timestamp specified in milliseconds")
def pexpireat(ctx: Ctx, argv: list[bytes]) -> object:
    """PEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=False, seconds=False)


# -- TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST -------------------------------------------
def _ttl(ctx: Ctx, key: bytes, absolute: bool, ms: bool) -> int:
    if lookup_read(ctx, key, touch=False) is None:
        return -2
    when = ctx.db.expires.get(key)
    if when is None:
        return -1
    if absolute:
        return when if ms else when // 1000
    left = max(0, when - ctx.now_ms())
    return left if ms else (left + 500) // 1000


@command("ttl", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="1.0.0", complexity="O(1)", summary="Get the time to live for a key in seconds")
def ttl(ctx: Ctx, argv: list[bytes]) -> object:
    """TTL key"""
    return _ttl(ctx, argv[1], absolute=False, ms=False)


@command("pttl", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="2.6.0", complexity="O(1)", summary="Get the time to live for a key in milliseconds")
def pttl(ctx: Ctx, argv: list[bytes]) -> object:
    """PTTL key"""
    return _ttl(ctx, argv[1], absolute=False, ms=True)


@command("expiretime", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="7.0.0", complexity="O(1)",
         summary="Get the expiration Unix timestamp for a key")
def expiretime(ctx: Ctx, argv: list[bytes]) -> object:
    """EXPIRETIME key"""
    return _ttl(ctx, argv[1], absolute=True, ms=False)


@command("pexpiretime", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="7.0.0", complexity="O(1)",
         summary="Get the expiration Unix timestamp for a key in milliseconds")
def pexpiretime(ctx: Ctx, argv: list[bytes]) -> object:
    """PEXPIRETIME key"""
    return _ttl(ctx, argv[1], absolute=True, ms=True)


@command("persist", arity=2, flags="write fast", keys=(1, 1, 1), group="generic",
         since="2.2.0", complexity="O(1)", summary="Remove the expiration from a key")
def persist(ctx: Ctx, argv: list[bytes]) -> object:
    """PERSIST key"""
    key = argv[1]
    if ctx.db.get(key) is None or not ctx.db.persist(key):
        return 0
    ctx.modified(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_GENERIC, b"persist", key)
    return 1


# -- OBJECT -----------------------------------------------------------------------
SHARED_INTEGERS = 10000          # Redis shares the integers 0..9999 ...
SHARED_REFCOUNT = 2147483647     # ... and reports them with this refcount


def _as_long(value: bytes) -> int | None:
    """The integer a string holds if Redis would store it as one (string2l)."""
    if len(value) > 20:
        return None
    try:
        return parse_int(value)
    except CommandError:
        return None


def string_encoding(value: bytes) -> bytes:
    """What OBJECT ENCODING says for a string: Redis's rules for SET values."""
    if _as_long(value) is not None:
        return b"int"
    return b"embstr" if len(value) <= 44 else b"raw"


# Strings whose Redis encoding is not the one SET gives their value: APPEND
# and SETRANGE leave a "raw" string, INCRBYFLOAT an "embstr" even for "3".
# Keyed by the identity of the bytes object stored (a later write stores
# another object, so the mark no longer applies; RENAME keeps it, as Redis
# keeps the encoding).  Only strings of 2 to 44 bytes need a mark (longer
# ones are "raw" anyway; CPython shares the objects of 0 and 1 byte, so those
# cannot carry one); the table holds at most STRING_MARKS_MAX, oldest dropped.
STRING_MARKS_MAX = 4096
_string_marks: dict[int, tuple[bytes, bytes]] = {}


def mark_string_encoding(value: bytes, encoding: bytes) -> None:
    """Record that the string object ``value`` (just stored) has Redis
    encoding ``encoding``.  O(1)."""
    if len(value) < 2 or len(value) > 44 or string_encoding(value) == encoding:
        return
    if len(_string_marks) >= STRING_MARKS_MAX:
        del _string_marks[next(iter(_string_marks))]
    _string_marks[id(value)] = (value, encoding)


def _marked_encoding(value: bytes) -> bytes | None:
    mark = _string_marks.get(id(value))
    return mark[1] if mark is not None and mark[0] is value else None


def object_encoding(value: Any) -> bytes:
    """OBJECT ENCODING: Redis's rules for strings; every other value type
    names its own encoding (``object_encoding()``)."""
    if type(value) is bytes:
        return _marked_encoding(value) or string_encoding(value)
    return value.object_encoding()


def refcount(value: Any) -> int:
    if isinstance(value, bytes):
        if _marked_encoding(value) is not None:
            return 1  # a string object of its own, never a shared integer
        number = _as_long(value)
        if number is not None and 0 <= number < SHARED_INTEGERS:
            return SHARED_REFCOUNT
    return 1


def idle_seconds(ctx: Ctx, key: bytes) -> int:
    return ctx.db.idle_ms(key) // 1000


@command("object", arity=-2, group="generic", since="2.2.3", complexity="Depends on subcommand.",
         summary="A container for object introspection commands", container=True)
def object_(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT subcommand [argument ...]"""


def _object_lookup(ctx: Ctx, key: bytes) -> Any:
    return lookup_read(ctx, key, touch=False, notify=False)


@command("object|encoding", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="2.2.3", complexity="O(1)", summary="Inspect the internal encoding of a Redis object")
def object_encoding_(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT ENCODING key"""
    value = _object_lookup(ctx, argv[2])
    return None if value is None else object_encoding(value)


@command("object|refcount", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="2.2.3", complexity="O(1)",
         summary="Get the number of references to the value of the key")
def object_refcount(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT REFCOUNT key"""
    value = _object_lookup(ctx, argv[2])
    return None if value is None else refcount(value)


@command("object|idletime", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="2.2.3", complexity="O(1)",
         summary="Get the time since a Redis object was last accessed")
def object_idletime(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT IDLETIME key"""
    if _object_lookup(ctx, argv[2]) is None:
        return None
    if ctx.db.lfu is not None:
        raise CommandError(LFU_SELECTED)
    return idle_seconds(ctx, argv[2])


@command("object|freq", arity=3, flags="readonly", keys=(2, 2, 1), group="generic",
         since="4.0.0", complexity="O(1)",
         summary="Get the logarithmic access frequency counter of a Redis object")
def object_freq(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT FREQ key"""
    if _object_lookup(ctx, argv[2]) is None:
        return None
    if ctx.db.lfu is None:
        raise CommandError(LFU_NOT_SELECTED)
    return ctx.db.frequency(argv[2])


_OBJECT_HELP = [
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
]


@command("object|help", arity=2, flags="loading stale", group="generic", since="6.2.0",
         complexity="O(1)", summary="Show helpful text about the different subcommands")
def object_help(ctx: Ctx, argv: list[bytes]) -> object:
    """OBJECT HELP"""
    return help_reply(_OBJECT_HELP)
