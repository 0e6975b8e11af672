"""Server configuration: the options Tidelog supports, in redis.conf syntax.

One table, :data:`OPTIONS`, says for every option its type, default, whether
``CONFIG SET`` may change it at run time, and how its value is shown by
``CONFIG GET``.  The same table reads config files, ``--name value`` command
line arguments and ``CONFIG SET``, so the three always agree.  Errors carry
Redis's texts.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import REDIS_VERSION, errors

_MEMORY_UNITS = {
    "": 1, "b": 1, "k": 1000, "kb": 1024, "m": 1000**2, "mb": 1024**2,
    "g": 1000**3, "gb": 1024**3,
}


class ConfigError(ValueError):
    """A value or option was refused; the text says why (Redis's wording)."""


def parse_memory(text: str) -> int:
    """``100``, ``1k``, ``64mb``, ``1gb`` -> bytes, read as Redis's memtoull
    reads them: digits only (an empty number is 0, as in Redis), a unit from
    b/k/kb/m/mb/g/gb in any case, and the result taken as a signed 64-bit
    value (so anything from 2**63 up is negative and fails a range check)."""
    lower = text.lower()
    digits = lower.rstrip("kmgb")
    unit = lower[len(digits):]
    if unit not in _MEMORY_UNITS or (digits and not (digits.isascii() and digits.isdigit())):
        raise ConfigError(errors.CONFIG_NOT_MEMORY)
    value = min(int(digits or "0"), 2**64 - 1) * _MEMORY_UNITS[unit] % 2**64
    return value - 2**64 if value >= 2**63 else value


def _strict_int(text: str) -> int:
    """A canonical signed 64-bit decimal (Redis's string2ll): no spaces, no
    ``+``, no leading zeros."""
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()) or (digits[0] == "0" and text != "0"):
        raise ConfigError(errors.CONFIG_NOT_INTEGER)
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ConfigError(errors.CONFIG_NOT_INTEGER)
    return value


def _parse_int(lo: int, hi: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = _strict_int(text)
        if not lo <= value <= hi:
            raise ConfigError(errors.config_out_of_range(lo, hi))
        return value
    return parse


def _parse_memory_bounded(lo: int, hi: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = parse_memory(text)
        if not lo <= value <= hi:
            raise ConfigError(errors.config_out_of_range(lo, hi))
        return value
    return parse


def _parse_octal(text: str) -> int:
    """``unixsocketperm 700``: an octal number, 0..0o777."""
    if not text or not all(c in "01234567" for c in text):
        raise ConfigError(errors.CONFIG_NOT_OCTAL)
    value = int(text, 8)
    if value > 0o777:
        raise ConfigError(errors.config_out_of_range(0, 777))  # 0o777, shown in octal
    return value


def _parse_hz(text: str) -> int:
    """``hz`` accepts 0..INT_MAX and is then kept within 1..500, as in Redis."""
    return max(1, min(500, _parse_int(0, INT32_MAX)(text)))


def _parse_bool(text: str) -> bool:
    lower = text.lower()
    if lower == "yes":
        return True
    if lower == "no":
        return False
    raise ConfigError(errors.CONFIG_NOT_YES_NO)


def _parse_enum(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text.lower() not in choices:
            raise ConfigError(errors.config_not_one_of(choices))
        return text.lower()
    return parse


def _parse_string(text: str) -> str:
    return text


def _parse_words(text: str) -> str:
    """A space separated list (``bind``), normalised to single spaces."""
    return " ".join(text.split())


def _parse_tls_protocols(text: str) -> str:
    """``tls-protocols``: names among TLSv1, TLSv1.1, TLSv1.2, TLSv1.3 (empty:
    TLSv1.2 and TLSv1.3, Redis's default)."""
    words = text.split()
    for word in words:
        if word.lower() not in ("tlsv1", "tlsv1.1", "tlsv1.2", "tlsv1.3"):
            raise ConfigError(f"Invalid tls-protocols specified: {word}")
    return " ".join(words)


# Redis 8.6's names, in its order (7.0's, with each family's LRM one added last).
_POLICIES = ("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "volatile-lrm",
             "allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-lrm", "noeviction")


def _parse_replicaof(text: str) -> str:
    """``host port``, or nothing (``no one`` too: a primary)."""
    words = text.split()
    if not words or [w.lower() for w in words] == ["no", "one"]:
        return ""
    if len(words) != 2 or not words[1].isdigit() or not 0 <= int(words[1]) < 65536:
        raise ConfigError("wrong number of arguments" if len(words) != 2 else "Invalid master port")
    return " ".join(words)


def _parse_dbfilename(text: str) -> str:
    if "/" in text or not text:
        raise ConfigError(errors.CONFIG_DBFILENAME_PATH)
    return text


def _parse_save(text: str) -> str:
    """``save <seconds> <changes> [...]``: pairs of numbers, or "" for none;
    kept as the normalised text (``save_points`` reads it)."""
    words = text.split()
    if len(words) % 2:
        raise ConfigError(errors.CONFIG_BAD_SAVE)
    for word in words:
        if not (word.isascii() and word.isdigit()) or int(word) > LONG_MAX:
            raise ConfigError(errors.CONFIG_BAD_SAVE)
    return " ".join(str(int(w)) for w in words)


def save_points(text: str) -> list[tuple[int, int]]:
    """The ``save`` option as ``[(seconds, changes), ...]``."""
    words = [int(w) for w in text.split()]
    return list(zip(words[0::2], words[1::2]))


# -- notify-keyspace-events ------------------------------------------------------------
# The event classes, as bits (the ``cls`` of ``Ctx.notify``).  K and E say
# where events go (``__keyspace@<db>__:<key>``, ``__keyevent@<db>__:<event>``);
# the others which events are sent.
NOTIFY_KEYSPACE = 1 << 0
NOTIFY_KEYEVENT = 1 << 1
NOTIFY_GENERIC = 1 << 2
NOTIFY_STRING = 1 << 3
NOTIFY_LIST = 1 << 4
NOTIFY_SET = 1 << 5
NOTIFY_HASH = 1 << 6
NOTIFY_ZSET = 1 << 7
NOTIFY_EXPIRED = 1 << 8
NOTIFY_EVICTED = 1 << 9
NOTIFY_STREAM = 1 << 10
NOTIFY_KEY_MISS = 1 << 11
NOTIFY_LOADED = 1 << 12   # modules only; never set by the option
NOTIFY_MODULE = 1 << 13
NOTIFY_NEW = 1 << 14
# 'A': every class but key-miss and new-key (as Redis).
NOTIFY_ALL = (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH
              | NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

_NOTIFY_CLASSES = {
    "A": NOTIFY_ALL, "g": NOTIFY_GENERIC, "$": NOTIFY_STRING, "l": NOTIFY_LIST,
    "s": NOTIFY_SET, "h": NOTIFY_HASH, "z": NOTIFY_ZSET, "x": NOTIFY_EXPIRED,
    "e": NOTIFY_EVICTED, "K": NOTIFY_KEYSPACE, "E": NOTIFY_KEYEVENT, "t": NOTIFY_STREAM,
    "m": NOTIFY_KEY_MISS, "d": NOTIFY_MODULE, "n": NOTIFY_NEW,
}
# The order CONFIG GET shows the classes in: these (or 'A' for all of them) ...
_NOTIFY_SHOWN_CLASSES = (("g", NOTIFY_GENERIC), ("$", NOTIFY_STRING), ("l", NOTIFY_LIST),
                         ("s", NOTIFY_SET), ("h", NOTIFY_HASH), ("z", NOTIFY_ZSET),
                         ("x", NOTIFY_EXPIRED), ("e", NOTIFY_EVICTED), ("t", NOTIFY_STREAM),
                         ("d", NOTIFY_MODULE), ("n", NOTIFY_NEW))
# ... then these.
_NOTIFY_SHOWN_AFTER = (("K", NOTIFY_KEYSPACE), ("E", NOTIFY_KEYEVENT), ("m", NOTIFY_KEY_MISS))


def parse_notify_events(text: str) -> int:
    """``notify-keyspace-events``: a string of class characters -> their bits."""
    flags = 0
    for char in text:
        bit = _NOTIFY_CLASSES.get(char)
        if bit is None:
            raise ConfigError(errors.CONFIG_NOTIFY_CLASS)
        flags |= bit
    return flags


def show_notify_events(flags: int) -> str:
    """The canonical form CONFIG GET shows: ``A`` standing for every class
    it covers (a new-key 'n' set with it is then not shown, as in Redis),
    then K, E and m."""
    if flags & NOTIFY_ALL == NOTIFY_ALL:
        shown = "A"
    else:
        shown = "".join(char for char, bit in _NOTIFY_SHOWN_CLASSES if flags & bit)
    return shown + "".join(char for char, bit in _NOTIFY_SHOWN_AFTER if flags & bit)


# -- client-output-buffer-limit ----------------------------------------------------------
# The client classes, in the order CONFIG GET shows them ("replica" is
# accepted for "slave", which is what Redis shows).
BUFFER_LIMIT_CLASSES = ("normal", "slave", "pubsub")
_BUFFER_LIMIT_NAMES = {"normal": "normal", "slave": "slave", "replica": "slave",
                       "pubsub": "pubsub"}


@dataclass(frozen=True)
class BufferLimit:
    """One client class's output buffer limit: bytes (0: none), and the
    seconds the soft limit may be exceeded."""

    hard: int
    soft: int
    soft_seconds: int


def _parse_buffer_bytes(text: str) -> int:
    """A memory value as Redis's memtoull reads it here: unsigned 64-bit,
    digits too many saturating, the unit's product wrapping."""
    lower = text.lower()
    digits = lower.rstrip("kmgb")
    unit = lower[len(digits):]
    if not digits or unit not in _MEMORY_UNITS or not (digits.isascii() and digits.isdigit()):
        raise ConfigError(errors.CONFIG_BUFFER_LIMIT_VALUE)
    return min(int(digits), 2**64 - 1) * _MEMORY_UNITS[unit] % 2**64


def _parse_buffer_seconds(text: str) -> int:
    """soft_seconds: a decimal (sign and leading zeros allowed) kept in a C
    int, as Redis keeps it; negative after that is an error."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not (body.isascii() and body.isdigit()):
        raise ConfigError(errors.CONFIG_BUFFER_LIMIT_VALUE)
    value = max(-(2**63), min(2**63 - 1, int(text)))  # strtoll saturates
    value &= 0xFFFFFFFF
    if value >= 2**31:
        raise ConfigError(errors.CONFIG_BUFFER_LIMIT_VALUE)
    return value


def parse_buffer_limits(text: str, base: dict[str, BufferLimit] | None = None) -> dict[str, BufferLimit]:
    """``<class> <hard> <soft> <soft_seconds> [...]``: the limits of the
    classes named replaced in ``base`` (the defaults when None).  All or
    nothing: a bad group changes nothing."""
    words = text.split()
    if len(words) % 4:
        raise ConfigError(errors.CONFIG_BUFFER_LIMIT_ARGS)
    limits = dict(base if base is not None else DEFAULT_BUFFER_LIMITS)
    for i in range(0, len(words), 4):
        name = _BUFFER_LIMIT_NAMES.get(words[i].lower())
        if name is None:
            raise ConfigError(errors.CONFIG_BUFFER_LIMIT_CLASS)
        limits[name] = BufferLimit(_parse_buffer_bytes(words[i + 1]),
                                   _parse_buffer_bytes(words[i + 2]),
                                   _parse_buffer_seconds(words[i + 3]))
    return limits


def show_buffer_limits(limits: dict[str, BufferLimit]) -> str:
    return " ".join(f"{name} {limits[name].hard} {limits[name].soft} {limits[name].soft_seconds}"
                    for name in BUFFER_LIMIT_CLASSES)


DEFAULT_BUFFER_LIMITS = {
    "normal": BufferLimit(0, 0, 0),
    "slave": BufferLimit(256 * 1024**2, 64 * 1024**2, 60),
    "pubsub": BufferLimit(32 * 1024**2, 8 * 1024**2, 60),
}

def _parse_percentiles(text: str) -> tuple[float, ...]:
    """``latency-tracking-info-percentiles 50 99 99.9``: numbers in [0, 100]."""
    values = []
    for word in text.split():
        try:
            value = float(word)
        except ValueError:
            raise ConfigError("Invalid latency-tracking-info-percentiles parameters") from None
        if not 0.0 <= value <= 100.0:
            raise ConfigError("latency-tracking-info-percentiles parameters should sit "
                              "between [0.0,100.0]")
        values.append(value)
    return tuple(values)


def show_percentile(value: float) -> str:
    """A percentile as Redis shows it: ``99.9``, ``50``."""
    return ("%f" % value).rstrip("0").rstrip(".")


def _show_bool(value: bool) -> str:
    return "yes" if value else "no"


@dataclass(frozen=True)
class Option:
    name: str
    parse: Callable[[str], Any]
    default: str
    mutable: bool = True
    show: Callable[[Any], str] = str
    multi_arg: bool = False  # takes several words in a config file (bind)


INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
LONG_MAX = 2**63 - 1

OPTIONS: dict[str, Option] = {o.name: o for o in [
    Option("port", _parse_int(0, 65535), "6379", mutable=False),
    Option("bind", _parse_words, "127.0.0.1", mutable=False, multi_arg=True),
    Option("unixsocket", _parse_string, "", mutable=False),
    Option("unixsocketperm", _parse_octal, "0", mutable=False, show=lambda v: f"{v:o}"),
    Option("dir", os.path.abspath, "./data", mutable=True),
    Option("databases", _parse_int(1, INT32_MAX), "16", mutable=False),
    Option("loglevel", _parse_enum("debug", "verbose", "notice", "warning"), "notice"),
    Option("logfile", _parse_string, "", mutable=False),
    Option("maxclients", _parse_int(1, UINT32_MAX), "10000"),
    Option("timeout", _parse_int(0, INT32_MAX), "0"),
    Option("tcp-keepalive", _parse_int(0, INT32_MAX), "300"),
    Option("hz", _parse_hz, "10"),
    Option("proto-max-bulk-len", _parse_memory_bounded(1024 * 1024, LONG_MAX), "536870912"),
    Option("client-query-buffer-limit", _parse_memory_bounded(1024 * 1024, LONG_MAX), "1073741824"),
    Option("stream-node-max-entries", _parse_int(0, LONG_MAX), "100"),
    Option("stream-node-max-bytes", _parse_memory_bounded(0, LONG_MAX), "4096"),
    Option("list-max-listpack-size", _parse_int(-(2**31), INT32_MAX), "-2"),
    Option("list-compress-depth", _parse_int(0, INT32_MAX), "0"),
    # Redis 8.6: the IDMP settings a stream takes when it first uses IDMP
    # (XCFGSET changes one stream's); seconds, and iids per producer.
    Option("stream-idmp-duration", _parse_int(1, 86400), "100"),
    Option("stream-idmp-maxsize", _parse_int(1, 10000), "100"),
    # Hashes (types/hash.py): a hash is a listpack until it holds more fields
    # or a longer field or value than these, then a hashtable for good.
    Option("hash-max-listpack-entries", _parse_int(0, LONG_MAX), "512"),
    Option("hash-max-listpack-value", _parse_memory_bounded(0, LONG_MAX), "64"),
    # Sets (types/set.py): the intset and listpack (Redis 7.2+) encodings' limits.
    Option("set-max-intset-entries", _parse_int(0, LONG_MAX), "512"),
    Option("set-max-listpack-entries", _parse_int(0, LONG_MAX), "128"),
    Option("set-max-listpack-value", _parse_memory_bounded(0, LONG_MAX), "64"),
    # Sorted sets (types/zset.py): a listpack until more members or a longer one.
    Option("zset-max-listpack-entries", _parse_int(0, LONG_MAX), "128"),
    Option("zset-max-listpack-value", _parse_memory_bounded(0, LONG_MAX), "64"),
    Option("daemonize", _parse_bool, "no", mutable=False, show=_show_bool),
    Option("protected-mode", _parse_bool, "yes", show=_show_bool),
    # The default user's password (empty: none; clients are authenticated at
    # connect).  A replica authenticates to its primary with masterauth
    # (as masteruser, when set).
    Option("requirepass", _parse_string, ""),
    # ACL (commands/acl_users.py): the users' file (ACL LOAD / SAVE; users
    # come from it or from ``user`` lines in this file, not both), ACL LOG's
    # length, and the channels a new user may use (Redis 7+: none).
    Option("aclfile", _parse_string, "", mutable=False),
    Option("acllog-max-len", _parse_int(0, LONG_MAX), "128"),
    Option("acl-pubsub-default", _parse_enum("allchannels", "resetchannels"), "resetchannels"),
    # Memory (heap.py measures it): past maxmemory (0: no limit), keys are
    # evicted (eviction.py) or, with noeviction or nothing to evict, the
    # commands that grow the data set get -OOM.
    Option("maxmemory", _parse_memory_bounded(0, LONG_MAX), "0"),
    Option("maxmemory-policy", _parse_enum(*_POLICIES), "noeviction"),
    Option("maxmemory-samples", _parse_int(1, 64), "5"),
    # The LFU policies' counter (lfu.py): how slowly it grows, and the
    # minutes per decrement while a key is not used (0: never).
    Option("lfu-log-factor", _parse_int(0, INT32_MAX), "10"),
    Option("lfu-decay-time", _parse_int(0, INT32_MAX), "1"),
    Option("masterauth", _parse_string, ""),
    Option("masteruser", _parse_string, ""),
    Option("pidfile", _parse_string, "", mutable=False),
    # The append-only file (persistence/aof.py): Redis 7's multi-part layout.
    # CONFIG SET appendonly starts or stops it (persistence.aof_switch.set_appendonly).
    Option("appendonly", _parse_bool, "no", show=_show_bool),
    Option("appendfsync", _parse_enum("always", "everysec", "no"), "everysec"),
    Option("appenddirname", _parse_string, "appendonlydir", mutable=False),
    Option("appendfilename", _parse_string, "appendonly.aof", mutable=False),
    Option("aof-load-truncated", _parse_bool, "yes", show=_show_bool),
    Option("aof-use-rdb-preamble", _parse_bool, "yes", show=_show_bool),
    Option("auto-aof-rewrite-percentage", _parse_int(0, INT32_MAX), "100"),
    Option("auto-aof-rewrite-min-size", _parse_memory_bounded(0, LONG_MAX), "67108864"),
    # Snapshots (persistence/rdb.py).  ``rdb-version`` is Tidelog's own: 10
    # (stream type 19, readable by Redis 7.0+) or 11 (type 21, keeps consumer
    # active-time, readable by Redis 7.2+ only).
    Option("dbfilename", _parse_dbfilename, "dump.rdb"),
    Option("save", _parse_save, "3600 1 300 100 60 10000", multi_arg=True),
    Option("rdbcompression", _parse_bool, "yes", show=_show_bool),
    Option("rdbchecksum", _parse_bool, "yes", mutable=False, show=_show_bool),
    Option("rdb-version", _parse_int(10, 11), "10"),
    # Replication, the primary's side (replication/primary.py).  A full sync
    # always sends the snapshot as one `$<length>` bulk (the snapshot is made
    # in memory); repl-diskless-sync and its delay are accepted for
    # compatibility with configuration files.
    Option("repl-backlog-size", _parse_memory_bounded(1, LONG_MAX), "1048576"),
    Option("repl-backlog-ttl", _parse_int(0, INT32_MAX), "3600"),
    Option("repl-ping-replica-period", _parse_int(1, INT32_MAX), "10"),
    Option("repl-timeout", _parse_int(1, INT32_MAX), "60"),
    Option("repl-diskless-sync", _parse_bool, "yes", show=_show_bool),
    Option("repl-diskless-sync-delay", _parse_int(0, INT32_MAX), "5"),
    # Replication, the replica's side (replication/replica.py).  ``replicaof``
    # is "host port" (empty: a primary); set at startup it starts the link,
    # at run time REPLICAOF changes it.
    Option("replicaof", _parse_replicaof, "", mutable=False, multi_arg=True),
    Option("replica-read-only", _parse_bool, "yes", show=_show_bool),
    Option("replica-serve-stale-data", _parse_bool, "yes", show=_show_bool),
    Option("replica-priority", _parse_int(0, INT32_MAX), "100"),
    Option("replica-announced", _parse_bool, "yes", show=_show_bool),
    # A primary refuses writes (-NOREPLICAS) unless this many replicas
    # acknowledged within max-lag seconds (0: never refuses).
    Option("min-replicas-to-write", _parse_int(0, INT32_MAX), "0"),
    # TLS (server/tls.py): a second port beside the plain one; read at start-up.
    Option("tls-port", _parse_int(0, 65535), "0", mutable=False),
    Option("tls-cert-file", _parse_string, "", mutable=False),
    Option("tls-key-file", _parse_string, "", mutable=False),
    Option("tls-key-file-pass", _parse_string, "", mutable=False),
    Option("tls-client-cert-file", _parse_string, "", mutable=False),
    Option("tls-client-key-file", _parse_string, "", mutable=False),
    Option("tls-client-key-file-pass", _parse_string, "", mutable=False),
    Option("tls-ca-cert-file", _parse_string, "", mutable=False),
    Option("tls-ca-cert-dir", _parse_string, "", mutable=False),
    Option("tls-auth-clients", _parse_enum("yes", "no", "optional"), "yes", mutable=False),
    Option("tls-protocols", _parse_tls_protocols, "", mutable=False),
    Option("tls-ciphers", _parse_string, "", mutable=False),
    Option("tls-prefer-server-ciphers", _parse_bool, "no", mutable=False, show=_show_bool),
    Option("tls-replication", _parse_bool, "no", mutable=False, show=_show_bool),
    Option("min-replicas-max-lag", _parse_int(0, INT32_MAX), "10"),
    # Keyspace notifications: the classes of events published (Pub/Sub).
    Option("notify-keyspace-events", parse_notify_events, "", show=show_notify_events),
    # Output buffer limits per client class (the network layer enforces
    # them); several lines in a config file each change the classes named.
    Option("client-output-buffer-limit", parse_buffer_limits,
           "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
           show=show_buffer_limits, multi_arg=True),
    # The operator's view (commands/monitoring.py; the engine caches the
    # thresholds: Engine.refresh_thresholds).
    Option("slowlog-log-slower-than", _parse_int(-1, LONG_MAX), "10000"),
    Option("slowlog-max-len", _parse_int(0, LONG_MAX), "128"),
    Option("latency-monitor-threshold", _parse_int(0, LONG_MAX), "0"),
    Option("latency-tracking", _parse_bool, "yes", show=_show_bool),
    Option("latency-tracking-info-percentiles", _parse_percentiles, "50 99 99.9",
           multi_arg=True, show=lambda v: " ".join(show_percentile(p) for p in v)),
    # Scripting: past this many milliseconds a running script makes the
    # server answer -BUSY (SCRIPT KILL can stop it); 0: at once.
    Option("busy-reply-threshold", _parse_int(0, LONG_MAX), "5000"),
]}

# Old names still accepted (CONFIG GET answers with the name asked for).
ALIASES: dict[str, str] = {"lua-time-limit": "busy-reply-threshold",
                           # the ziplist names of Redis < 7, which 7 and 8 still accept
                           "list-max-ziplist-size": "list-max-listpack-size",
                           "hash-max-ziplist-entries": "hash-max-listpack-entries",
                           "hash-max-ziplist-value": "hash-max-listpack-value",
                           "zset-max-ziplist-entries": "zset-max-listpack-entries",
                           "zset-max-ziplist-value": "zset-max-listpack-value"}


class Config:
    """The option values in force.  ``config.get("port")`` -> typed value."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            name: opt.parse(opt.default) for name, opt in OPTIONS.items()
        }
        self.config_file: str | None = None
        # ``rename-command <command> <new name | "">``, in file order (the
        # engine applies them: Engine.apply_renames).
        self.renames: list[tuple[str, str]] = []
        # ``user <name> [rule ...]`` lines, in file order (the engine makes
        # the users: Engine.__init__).
        self.users: list[list[bytes]] = []
        self._save_lines = False  # a `save` directive was read: the next ones add points

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def get(self, name: str) -> Any:
        return self._values[name]

    def set(self, name: str, text: str, *, at_startup: bool = False) -> None:
        """Parse and store one value; raises ConfigError (or KeyError if unknown)."""
        opt = OPTIONS[ALIASES.get(name.lower(), name.lower())]
        if not at_startup and not opt.mutable:
            raise ConfigError(errors.CONFIG_IMMUTABLE.decode())
        if opt.parse is parse_buffer_limits:  # changes only the classes named
            self._values[opt.name] = parse_buffer_limits(text, self._values.get(opt.name))
            return
        self._values[opt.name] = opt.parse(text)

    def show(self, name: str) -> str:
        opt = OPTIONS[name]
        return opt.show(self._values[name])

    def matching(self, pattern: str) -> list[tuple[str, str]]:
        """(name, shown value) for every option matching a glob pattern."""
        pattern = pattern.lower()
        if pattern in OPTIONS:
            return [(pattern, self.show(pattern))]
        if pattern in ALIASES:
            return [(pattern, self.show(ALIASES[pattern]))]
        return [(n, self.show(n)) for n in OPTIONS if fnmatch.fnmatchcase(n, pattern)]

    # -- reading redis.conf ---------------------------------------------------
    def load_text(self, text: str) -> None:
        """Apply a redis.conf; raises ConfigError with Redis's line report."""
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            try:
                words = shlex.split(line, posix=True)
            except ValueError:
                raise _bad_line(number, raw, errors.CONFIG_UNBALANCED_QUOTES) from None
            name, args = words[0].lower(), words[1:]
            try:
                self.apply_directive(name, args)
            except ConfigError as exc:
                raise _bad_line(number, raw, str(exc)) from None

    def apply_directive(self, name: str, args: list[str]) -> None:
        if name == "user":
            if not args:
                raise ConfigError(errors.CONFIG_WRONG_ARGUMENTS)
            self.users.append([a.encode("utf-8", "surrogateescape") for a in args])
            return
        if name == "rename-command":
            if len(args) != 2:
                raise ConfigError(errors.CONFIG_WRONG_ARGUMENTS)
            self.renames.append((args[0].lower(), args[1].lower()))
            return
        opt = OPTIONS.get(ALIASES.get(name, name))
        if opt is None:
            raise ConfigError(errors.CONFIG_BAD_DIRECTIVE)
        if not args or (len(args) > 1 and not opt.multi_arg):
            raise ConfigError(errors.CONFIG_WRONG_ARGUMENTS)
        if opt.name == "save":  # as Redis: the first line replaces the default, others add
            text = " ".join(args)
            if self._save_lines and text.strip():
                text = f"{self.show('save')} {text}"
            self._save_lines = True
            self.set(name, text, at_startup=True)
            return
        self.set(name, " ".join(args), at_startup=True)


def _bad_line(number: int, raw: str, why: str) -> ConfigError:
    return ConfigError(errors.config_file_error(REDIS_VERSION, number, raw.strip(), why))
