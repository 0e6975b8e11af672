"""DEBUG: the subcommands tests and operators use.

DEBUG's subcommands are a small table of their own (:func:`debug_subcommand`).
RELOAD and LOADAOF ask the engine's ``persistence`` interface for the work,
so this module never reaches into snapshots or the AOF.  DEBUG HELP lists
every subcommand Tidelog has.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from ... import errors
from ...config import ConfigError, parse_memory
from ...errors import (
    DEBUG_PACKED_THRESHOLD,
    DEBUG_PROTOCOL_PUSH_RESP2,
    DEBUG_PROTOCOL_TYPE,
    NO_SUCH_KEY,
    CommandError,
    debug_unknown_subcommand,
)
from ...ids import MIN_ID
from ...resp.replies import OK, Map, RawReply, SetReply, SimpleString, Verbatim
from ...types.array import TAG_FLOAT, TAG_INT, Array, value_tag
from ...types.hash import Hash
from ...types.list import List
from ...types.set import Set
from ...types.stream import Stream
from ...types.zset import ZSet
from ..args import ArgReader, parse_int
from ..contract import Ctx, Reply
from ..encoding import idle_seconds, object_encoding, refcount
from ..replies import help_handler
from ..table import COMMANDS, command

DebugHandler = Callable[[Ctx, list[bytes]], Reply]

# name (lower case) -> (handler, exact argument count including DEBUG and the
# name, or 0 for any)
DEBUG_SUBCOMMANDS: dict[bytes, tuple[DebugHandler, int]] = {}


def debug_subcommand(name: str, arity: int = 0) -> Callable[[DebugHandler], DebugHandler]:
    """Register a DEBUG subcommand; ``arity`` counts DEBUG and the name (0: any)."""

    def register(handler: DebugHandler) -> DebugHandler:
        key = name.encode()
        if key in DEBUG_SUBCOMMANDS:
            raise ValueError(f"DEBUG {name} registered twice")
        DEBUG_SUBCOMMANDS[key] = (handler, arity)
        return handler

    return register


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
    if isinstance(value, Hash):
        if not value.big:  # one listpack blob
            return 9 + sum(len(f) + len(v) + 4 for f, v in value.map.items())
        return 5 + sum(_serialized_length(f) + _serialized_length(v) for f, v in value.map.items())
    if isinstance(value, Set):  # RDB: an intset blob, or a count and each member
        if value.encoding == b"intset":
            return 13 + 8 * len(value)
        return 5 + sum(len(m) + 1 for m in value.members())
    if isinstance(value, List):
        return value.lp_bytes + 2 * (value.lp_bytes // 8192 + 1) + 1
    if isinstance(value, Array):  # RDB: per value its index, a tag, 8 bytes or a string
        return 2 + sum((1 if idx < 64 else 2 if idx < 16384 else 5 if idx < 1 << 32 else 9) + 1
                       + (8 if value_tag(item)[0] in (TAG_INT, TAG_FLOAT) else len(item) + 1)
                       for idx, item in value.items())
    if isinstance(value, ZSet):  # RDB: a listpack blob, or a count and member + 8-byte score
        if value.encoding == b"listpack":
            return 11 + sum(len(m) + 12 for m in value)
        return 5 + sum(len(m) + 9 for m in value)
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


@command("debug", arity=-2, flags="admin noscript loading stale", group="server",
         since="1.0.0", complexity="Depends on subcommand.",
         summary="A container for debugging commands", help=(
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "RELOAD [NOSAVE]",
    "    Save the RDB on disk and reload it back to memory. NOSAVE: skip the save.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "    (Accepted; Tidelog's lists have no plain nodes.)",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "HELP",
    "    Prints this help.",
))
def debug(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG subcommand [argument ...]"""
    found = DEBUG_SUBCOMMANDS.get(argv[1].lower())
    if found is None or (found[1] and len(argv) != found[1]):
        raise debug_unknown_subcommand(argv[1])
    return found[0](ctx, argv)


debug_subcommand("help", arity=2)(help_handler(COMMANDS["debug"]))


@debug_subcommand("sleep", arity=3)
def debug_sleep(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG SLEEP seconds"""
    # Stops the whole server, as in Redis: that is what tests use it for.
    time.sleep(max(0.0, _c_atof(argv[2])))
    return OK


@debug_subcommand("object", arity=3)
def debug_object(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG OBJECT key"""
    key = argv[2]
    # The key as stored, even past its expiry time (Redis looks in the
    # dictionary itself): a test can see that a key is still there.
    value = ctx.db.data.get(key)
    if value is None:
        raise CommandError(NO_SUCH_KEY)
    encoding = object_encoding(value).decode()
    return SimpleString((  # lru: the raw field (an LFU word under LFU), as Redis shows it
        f"Value at:{id(value):#x} refcount:{refcount(value)} encoding:{encoding} "
        f"serializedlength:{_serialized_length(value)} lru:{ctx.db.lru_field(key)} "
        f"lru_seconds_idle:{idle_seconds(ctx, key)}").encode())


@debug_subcommand("set-active-expire", arity=3)
def debug_set_active_expire(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG SET-ACTIVE-EXPIRE <0 | 1>"""
    ctx.engine.active_expire = bool(_c_atoi(argv[2]))
    return OK


@debug_subcommand("set-disable-deny-scripts", arity=3)
def debug_set_disable_deny_scripts(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG SET-DISABLE-DENY-SCRIPTS <0 | 1>

    Any value but 0 (as C's atoi reads it) lets scripts run the commands
    flagged noscript (a testing aid). O(1)."""
    ctx.engine.disable_deny_scripts = bool(_c_atoi(argv[2]))
    return OK


@debug_subcommand("pause-cron", arity=3)
def debug_pause_cron(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG PAUSE-CRON <0 | 1>

    Any value but 0 (as C's atoi reads it) stops the periodic work. O(1)."""
    ctx.engine.pause_cron = bool(_c_atoi(argv[2]))
    return OK


@debug_subcommand("change-repl-id", arity=2)
def debug_change_repl_id(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG CHANGE-REPL-ID"""
    ctx.engine.replication.change_replid()
    return OK


@debug_subcommand("error", arity=3)
def debug_error(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG ERROR string

    Replies ``string`` as an error (for clients' tests).  Cost: O(N) in its length."""
    raise errors.debug_error(argv[2])


@debug_subcommand("quicklist-packed-threshold", arity=3)
def debug_quicklist_packed_threshold(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG QUICKLIST-PACKED-THRESHOLD size

    Redis stores list elements from this size up in nodes of their own;
    Tidelog's lists have no such nodes, so the size is checked as Redis
    checks it (a memory value, at most 4 GB less 1 MB) and has no effect.
    O(1)."""
    try:
        size = parse_memory(argv[2].decode("latin-1"))
    except ConfigError:
        raise CommandError(DEBUG_PACKED_THRESHOLD) from None
    if not 0 <= size <= (1 << 32) - (1 << 20):
        raise CommandError(DEBUG_PACKED_THRESHOLD)
    return OK


_NO_DIGEST = b"0" * 40


def _field(data: bytes) -> bytes:
    return b"%d:%s" % (len(data), data)


def value_digest(value: Any) -> bytes:
    """A SHA-1 of a value's contents, the same for equal values whatever
    their encoding: members of sets and fields of hashes sorted, lists and
    sorted sets in order, a stream's entries and its groups' positions.
    (Tidelog's own digest: equal data gives equal digests, as DEBUG DIGEST
    promises, but the hex differs from Redis's.)  O(N log N)."""
    h = hashlib.sha1()
    if type(value) is bytes:
        h.update(b"string" + _field(value))
    elif isinstance(value, List):
        h.update(b"list")
        for item in value:
            h.update(_field(item))
    elif isinstance(value, Set):
        h.update(b"set")
        for member in sorted(value.members()):
            h.update(_field(member))
    elif isinstance(value, Hash):
        h.update(b"hash")
        for name in sorted(value.map):
            h.update(_field(name) + _field(value.map[name]))
    elif isinstance(value, ZSet):
        h.update(b"zset")
        for member, score in value.items():
            h.update(_field(member) + _field(repr(score).encode()))
    elif isinstance(value, Stream):
        h.update(b"stream" + _field(bytes(value.last_id)))
        ids, entries = value.read_from(MIN_ID, 0)
        for entry in entries:
            h.update(_field(entry[0]))
            for item in entry[1]:
                h.update(_field(item))
        for name in sorted(value.groups):
            group = value.groups[name]
            h.update(b"group" + _field(name) + _field(bytes(group.last_id)))
    else:
        h.update(repr(value).encode())
    return h.hexdigest().encode()


@debug_subcommand("digest", arity=2)
def debug_digest(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG DIGEST

    The digests of every key (its database, name, value and deadline) XORed
    together, so the order keys are held in does not matter; 40 zeros when
    every database is empty.  O(total size of the data)."""
    total = 0
    for db in ctx.engine.dbs:
        for key in list(db.data):
            value = db.peek(key)
            if value is None:
                continue
            h = hashlib.sha1(b"%d:" % db.index + _field(key) + value_digest(value))
            when = db.expires.get(key)
            if when is not None:
                h.update(b"expire:%d" % when)
            total ^= int.from_bytes(h.digest(), "big")
    return SimpleString(b"%040x" % total if total else _NO_DIGEST)


@debug_subcommand("digest-value")
def debug_digest_value(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG DIGEST-VALUE [key ...]

    Each key's value digest (:func:`value_digest`), 40 zeros for a missing
    key.  O(size of the values)."""
    out = []
    for key in argv[2:]:
        value = ctx.db.peek(key)
        out.append(SimpleString(_NO_DIGEST if value is None else value_digest(value)))
    return out


_BIGNUM = b"1234567999999999999999999999999999999"


@debug_subcommand("protocol", arity=3)
def debug_protocol(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG PROTOCOL type

    A sample reply of each RESP type, as Redis sends it (in RESP2 the RESP3
    types fall back as Redis's do).  O(1)."""
    kind = argv[2].lower()
    resp3 = ctx.client.protocol == 3
    if kind == b"string":
        return b"Hello World"
    if kind == b"integer":
        return 12345
    if kind == b"double":
        return 3.141
    if kind == b"bignum":
        return int(_BIGNUM)  # beyond 64 bits: a big number (RESP3) or a bulk string (RESP2)
    if kind == b"null":
        return None
    if kind == b"array":
        return [0, 1, 2]
    if kind == b"set":
        return SetReply([0, 1, 2])
    if kind == b"map":
        return Map([(0, False), (1, True), (2, False)])
    if kind == b"attrib":
        text = b"Some real reply following the attribute"
        head = b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n" if resp3 else b""
        return RawReply(head + b"$%d\r\n%s\r\n" % (len(text), text))
    if kind == b"push":
        if not resp3:
            raise CommandError(DEBUG_PROTOCOL_PUSH_RESP2)
        text = b"Some real reply following the push reply"
        return RawReply(b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n$%d\r\n%s\r\n" % (len(text), text))
    if kind == b"verbatim":
        return Verbatim(b"This is a verbatim\nstring", b"txt")
    if kind == b"true":
        return True
    if kind == b"false":
        return False
    raise CommandError(DEBUG_PROTOCOL_TYPE)


@debug_subcommand("reload")
def debug_reload(ctx: Ctx, argv: list[bytes]) -> Any:
    """DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save the snapshot, empty every
    database, load it back.  NOSAVE: no save; NOFLUSH: nothing is emptied, and
    a key or function library already there fails the load, unless MERGE (the
    snapshot's then replaces it).  O(N)."""
    r = ArgReader(argv, 2)
    options = set()
    while r.more():
        options.add(r.next_upper())
    r.finish()
    if options - {b"NOSAVE", b"MERGE", b"NOFLUSH"}:
        raise CommandError(errors.DEBUG_RELOAD_OPTIONS)
    ctx.engine.persistence.reload(b"NOSAVE" not in options, b"NOFLUSH" not in options,
                                  b"MERGE" in options)
    ctx.engine.signal_all_waited()  # blocked readers see the new values
    return OK


@debug_subcommand("loadaof", arity=2)
def debug_loadaof(ctx: Ctx, argv: list[bytes]) -> Any:
    """DEBUG LOADAOF: flush the AOF, empty the dataset, load the AOF again.  O(N)."""
    ctx.engine.persistence.load_aof()
    return OK
