"""Server configuration: the options Tidelog supports, in redis.conf syntax.

One table, :data:`OPTIONS`, says for every option its type, default, whether
``CONFIG SET`` may change it at run time, and how its value is shown by
``CONFIG GET``.  The same table reads config files, ``--name value`` command
line arguments and ``CONFIG SET``, so the three always agree.  Errors carry
Redis's texts.

Every option of Redis 8's config table is there, so any redis.conf starts
Tidelog; those Tidelog does not act on are marked ``no_effect`` (stored,
shown, settable as Redis allows, and named once in the start-up log).  Files
are read as Redis reads them: :func:`split_config_args` splits a line,
``include`` reads other files, Redis 8's deprecated directives are ignored.
"""

from __future__ import annotations

import fnmatch
import glob
import os
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


class ConfigFileError(ConfigError):
    """A config file line was refused: the text is Redis's whole report."""


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


def _parse_slice_size(text: str) -> int:
    """``array-slice-size``: a power of two from 256 to 65536 (Redis's
    AR_SLICE_SIZE_MIN and _MAX)."""
    value = _parse_int(256, 65536)(text)
    if value & (value - 1):
        raise ConfigError(errors.CONFIG_ARRAY_SLICE_SIZE)
    return value


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
# Redis 8.8's subkey channels (hash fields so far): S ``__subkeyspace@<db>__:<key>``,
# T ``__subkeyevent@<db>__:<event>``, I ``__subkeyspaceitem@<db>__:<key>\n<subkey>``,
# V ``__subkeyspaceevent@<db>__:<event>|<key>``.  Like K and E they say where
# an event goes; the class bits above still say which events are sent.
NOTIFY_SUBKEYSPACE = 1 << 15
NOTIFY_SUBKEYEVENT = 1 << 16
NOTIFY_SUBKEYSPACEITEM = 1 << 17
NOTIFY_SUBKEYSPACEEVENT = 1 << 18
NOTIFY_SUBKEY_ANY = (NOTIFY_SUBKEYSPACE | NOTIFY_SUBKEYEVENT | NOTIFY_SUBKEYSPACEITEM
                     | NOTIFY_SUBKEYSPACEEVENT)
# Arrays (Redis 8.8): set by 'A' (their own class letter is not known here,
# see docs/compatibility.md); kept out of NOTIFY_ALL so that 'A' still
# reads back for the classes Redis 7 knew.
NOTIFY_ARRAY = 1 << 19
# 'A': every class but key-miss and new-key (as Redis).
NOTIFY_ALL = (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH
              | NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

_NOTIFY_CLASSES = {
    "A": NOTIFY_ALL | NOTIFY_ARRAY, "g": NOTIFY_GENERIC, "$": NOTIFY_STRING, "l": NOTIFY_LIST,
    "s": NOTIFY_SET, "h": NOTIFY_HASH, "z": NOTIFY_ZSET, "x": NOTIFY_EXPIRED,
    "e": NOTIFY_EVICTED, "K": NOTIFY_KEYSPACE, "E": NOTIFY_KEYEVENT, "t": NOTIFY_STREAM,
    "m": NOTIFY_KEY_MISS, "d": NOTIFY_MODULE, "n": NOTIFY_NEW,
    "S": NOTIFY_SUBKEYSPACE, "T": NOTIFY_SUBKEYEVENT, "I": NOTIFY_SUBKEYSPACEITEM,
    "V": NOTIFY_SUBKEYSPACEEVENT,
}
# The order CONFIG GET shows the classes in: these (or 'A' for all of them) ...
_NOTIFY_SHOWN_CLASSES = (("g", NOTIFY_GENERIC), ("$", NOTIFY_STRING), ("l", NOTIFY_LIST),
                         ("s", NOTIFY_SET), ("h", NOTIFY_HASH), ("z", NOTIFY_ZSET),
                         ("x", NOTIFY_EXPIRED), ("e", NOTIFY_EVICTED), ("t", NOTIFY_STREAM),
                         ("d", NOTIFY_MODULE), ("n", NOTIFY_NEW))
# ... then these.
_NOTIFY_SHOWN_AFTER = (("K", NOTIFY_KEYSPACE), ("E", NOTIFY_KEYEVENT), ("m", NOTIFY_KEY_MISS),
                       ("S", NOTIFY_SUBKEYSPACE), ("T", NOTIFY_SUBKEYEVENT),
                       ("I", NOTIFY_SUBKEYSPACEITEM), ("V", NOTIFY_SUBKEYSPACEEVENT))


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
    then K, E, m and the subkey channels S, T, I, V."""
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
    # Accepted, typed, stored and shown as Redis does, but nothing in Tidelog
    # reads it; the start-up log names the ones a config file set.
    no_effect: bool = False
    # Redis's hidden (debugging) options: CONFIG GET answers them by their
    # exact name only, never for a pattern.
    hidden: bool = False


INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
LONG_MAX = 2**63 - 1

OPTIONS: dict[str, Option] = {o.name: o for o in [
    # port, bind, tls-port and the tls-* options: CONFIG SET rebinds or
    # reconfigures the listeners (Server.reconfigure), or fails and rolls back.
    Option("port", _parse_int(0, 65535), "6379"),
    Option("bind", _parse_words, "127.0.0.1", multi_arg=True),
    Option("unixsocket", _parse_string, "", mutable=False),
    Option("unixsocketperm", _parse_octal, "0", mutable=False, show=lambda v: f"{v:o}"),
    Option("dir", os.path.abspath, "./data", mutable=True),
    Option("databases", _parse_int(1, INT32_MAX), "16", mutable=False),
    Option("loglevel", _parse_enum("debug", "verbose", "notice", "warning", "nothing"), "notice"),
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
    # ACL (acl/registry.py): the users' file (ACL LOAD / SAVE; users
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
    Option("repl-diskless-sync", _parse_bool, "yes", show=_show_bool, no_effect=True),
    Option("repl-diskless-sync-delay", _parse_int(0, INT32_MAX), "5", no_effect=True),
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
    # TLS (server/tls.py): a second port beside the plain one.
    Option("tls-port", _parse_int(0, 65535), "0"),
    Option("tls-cert-file", _parse_string, ""),
    Option("tls-key-file", _parse_string, ""),
    Option("tls-key-file-pass", _parse_string, ""),
    Option("tls-client-cert-file", _parse_string, ""),
    Option("tls-client-key-file", _parse_string, ""),
    Option("tls-client-key-file-pass", _parse_string, ""),
    Option("tls-ca-cert-file", _parse_string, ""),
    Option("tls-ca-cert-dir", _parse_string, ""),
    Option("tls-auth-clients", _parse_enum("yes", "no", "optional"), "yes"),
    Option("tls-protocols", _parse_tls_protocols, ""),
    Option("tls-ciphers", _parse_string, ""),
    Option("tls-prefer-server-ciphers", _parse_bool, "no", show=_show_bool),
    Option("tls-replication", _parse_bool, "no", show=_show_bool),
    Option("min-replicas-max-lag", _parse_int(0, INT32_MAX), "10"),
    # Keyspace notifications: the classes of events published (Pub/Sub).
    Option("notify-keyspace-events", parse_notify_events, "", show=show_notify_events),
    # Output buffer limits per client class (the network layer enforces
    # them); several lines in a config file each change the classes named.
    Option("client-output-buffer-limit", parse_buffer_limits,
           "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
           show=show_buffer_limits, multi_arg=True),
    # The operator's view (commands/server/monitoring.py; the engine caches the
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
    # HyperLogLog (types/hyperloglog.py): a sparse HLL that would grow past
    # this many bytes (header included) turns dense.
    Option("hll-sparse-max-bytes", _parse_memory_bounded(0, LONG_MAX), "3000"),
    # Client-side caching (commands/session/tracking.py): most keys the tracking
    # table remembers (0: no limit); past it the oldest are invalidated.
    Option("tracking-table-max-keys", _parse_int(0, LONG_MAX), "1000000"),
    # MIGRATE (commands/keys/migrate_chunked.py), Tidelog's own: a stream of
    # at least this many entries goes to a Tidelog target in chunks, served
    # between, instead of one DUMP payload (0: never); the listpack bytes a
    # chunk carries at most (one bigger node travels alone).
    Option("migrate-stream-chunk-threshold", _parse_int(0, LONG_MAX), "10000"),
    Option("migrate-stream-chunk-bytes", _parse_memory_bounded(1, LONG_MAX), "262144"),
]}

# Old names still accepted (CONFIG GET answers with the name asked for).
ALIASES: dict[str, str] = {"lua-time-limit": "busy-reply-threshold",
                           # the ziplist names of Redis < 7, which 7 and 8 still accept
                           "list-max-ziplist-size": "list-max-listpack-size",
                           "hash-max-ziplist-entries": "hash-max-listpack-entries",
                           "hash-max-ziplist-value": "hash-max-listpack-value",
                           "zset-max-ziplist-entries": "zset-max-listpack-entries",
                           "zset-max-ziplist-value": "zset-max-listpack-value"}


# -- the rest of Redis 8's directives ----------------------------------------------------
# Every other option of Redis 8's config table, with Redis's type, range,
# default and mutability, so that any redis.conf (Redis's own, Debian's, one
# CONFIG REWRITE wrote) starts Tidelog.  Those marked no_effect are stored and
# shown only; the others are applied (tcp-backlog by the listener, syslog and
# supervision by server/daemon.py).

def _parse_memory_or_percent(lo: int, hi: int) -> Callable[[str], int]:
    """``maxmemory-clients``: bytes (memory units) or ``N%``, a percentage
    kept as a negative number, as Redis keeps it."""
    def parse(text: str) -> int:
        try:
            value = parse_memory(text)
        except ConfigError:
            value = None
        if value is None:  # not a memory value: a percentage?
            digits = text[:-1]
            if len(text) < 2 or not text.endswith("%") or not (
                    digits.isascii() and digits.isdigit()) or (digits[0] == "0" and digits != "0"):
                raise ConfigError(errors.CONFIG_NOT_MEMORY_OR_PERCENT)
            value = -int(digits)
            if value < lo:
                raise ConfigError(errors.config_percent_too_big(-lo))
            return value
        if not lo <= value <= hi:
            raise ConfigError(errors.config_out_of_range(lo, hi))
        return value
    return parse


def _show_memory_or_percent(value: int) -> str:
    return f"{-value}%" if value < 0 else str(value)


def _parse_oom_values(text: str) -> tuple[int, int, int]:
    """``oom-score-adj-values <primary> <replica> <child>``, each -2000..2000."""
    words = text.split()
    if len(words) != 3:
        raise ConfigError(errors.CONFIG_WRONG_ARGUMENTS)
    values = []
    for word in words:
        body = word[1:] if word[:1] in "+-" else word
        if not (body.isascii() and body.isdigit()) or not -2000 <= int(word) <= 2000:
            raise ConfigError(errors.CONFIG_OOM_VALUES)
        values.append(int(word))
    return values[0], values[1], values[2]


_SHUTDOWN_FLAGS = ("save", "nosave", "now", "force")


def _parse_shutdown_flags(text: str) -> str:
    """``shutdown-on-sigterm default | [save|nosave] [now] [force]``."""
    words = [w.lower() for w in text.split()]
    choices = ("default", *_SHUTDOWN_FLAGS)
    if not words or any(w not in choices for w in words):
        raise ConfigError(errors.config_not_one_of(choices))
    if "save" in words and "nosave" in words:
        raise ConfigError(errors.CONFIG_SHUTDOWN_SAVE_NOSAVE)
    shown = " ".join(f for f in _SHUTDOWN_FLAGS if f in words)
    return shown or "default"


_TITLE_VARIABLES = {"title": "", "listen-addr": "127.0.0.1:6379", "server-mode": "",
                    "config-file": "-", "port": "6379", "tls-port": "0", "unixsocket": ""}


def _parse_proc_title(text: str) -> str:
    """``proc-title-template``: ``{name}`` variables Redis knows (``{{`` is a
    brace); refused when malformed or when it expands to nothing."""
    out, i = [], 0
    while i < len(text):
        start = text.find("{", i)
        if start < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        if start + 1 >= len(text):
            raise ConfigError(errors.CONFIG_PROC_TITLE)
        if text[start + 1] == "{":
            out.append("{")
            i = start + 2
            continue
        end = text.find("}", start)
        if end < 0 or text[start + 1:end] not in _TITLE_VARIABLES:
            raise ConfigError(errors.CONFIG_PROC_TITLE)
        out.append(_TITLE_VARIABLES[text[start + 1:end]])
        i = end + 1
    if not "".join(out).strip(" "):
        raise ConfigError(errors.CONFIG_PROC_TITLE)
    return text


def _parse_hostname(text: str) -> str:
    """``cluster-announce-hostname``: letters, digits, '-' and '.', under 256."""
    if len(text.encode("utf-8", "surrogateescape")) >= 256:
        raise ConfigError(errors.CONFIG_HOSTNAME_LENGTH)
    if any(not (c.isascii() and (c.isalnum() or c in "-.")) for c in text):
        raise ConfigError(errors.CONFIG_HOSTNAME_CHARS)
    return text


def _parse_nodename(text: str) -> str:
    """``cluster-announce-human-nodename``: none of ``!#$%&()*+:;<>?@[]^{|}~``."""
    if any(c in "!#$%&()*+:;<>?@[]^{|}~" for c in text):
        raise ConfigError(errors.CONFIG_NODENAME_CHARS)
    return text


def _show_oom_adj(value: str) -> str:
    return "yes" if value == "relative" else value  # Redis shows the first name of a value


def _nx(name: str, parse: Callable[[str], Any], default: str, mutable: bool = True,
        **kw: Any) -> Option:
    """An option Tidelog accepts and shows but does not act on."""
    return Option(name, parse, default, mutable=mutable, no_effect=True, **kw)


def _bool_nx(name: str, default: str, mutable: bool = True) -> Option:
    return _nx(name, _parse_bool, default, mutable, show=_show_bool)


def _bool_on(name: str, default: str, mutable: bool = True) -> Option:
    """A yes/no option Tidelog acts on."""
    return Option(name, _parse_bool, default, mutable=mutable, show=_show_bool)


_INT_MAX_RANGE = _parse_int(0, INT32_MAX)

OPTIONS.update({o.name: o for o in [
    # Arrays (types/array.py): read when an array is created.
    Option("array-slice-size", _parse_slice_size, "4096"),
    Option("array-sparse-kmin", _parse_int(1, INT32_MAX), "5"),
    Option("array-sparse-kmax", _parse_int(1, INT32_MAX), "10"),
    # Applied: the listen backlog; the process (server/daemon.py).
    Option("tcp-backlog", _parse_int(0, INT32_MAX), "511", mutable=False),
    Option("syslog-enabled", _parse_bool, "no", mutable=False, show=_show_bool),
    Option("syslog-ident", _parse_string, "redis", mutable=False),
    Option("syslog-facility", _parse_enum("user", "local0", "local1", "local2", "local3",
                                          "local4", "local5", "local6", "local7"),
           "local0", mutable=False),
    Option("supervised", _parse_enum("upstart", "systemd", "auto", "no"), "no", mutable=False),
    # General.
    _bool_nx("always-show-logo", "no", mutable=False),
    _bool_nx("set-proc-title", "yes", mutable=False),
    _nx("proc-title-template", _parse_proc_title, "{title} {listen-addr} {server-mode}"),
    _nx("locale-collate", _parse_string, ""),
    _nx("ignore-warnings", _parse_string, ""),
    _bool_nx("crash-log-enabled", "yes"),
    _bool_nx("crash-memcheck-enabled", "yes"),
    _bool_nx("hide-user-data-from-log", "no"),
    _nx("enable-protected-configs", _parse_enum("no", "yes", "local"), "no", mutable=False),
    _nx("enable-debug-command", _parse_enum("no", "yes", "local"), "no", mutable=False),
    _nx("enable-module-command", _parse_enum("no", "yes", "local"), "no", mutable=False),
    _nx("shutdown-timeout", _INT_MAX_RANGE, "10"),
    _nx("shutdown-on-sigint", _parse_shutdown_flags, "default", multi_arg=True),
    _nx("shutdown-on-sigterm", _parse_shutdown_flags, "default", multi_arg=True),
    _nx("propagation-error-behavior", _parse_enum("ignore", "panic", "panic-on-replicas"),
        "ignore"),
    _nx("sanitize-dump-payload", _parse_enum("no", "yes", "clients"), "no"),
    # Network and clients.
    _nx("socket-mark-id", _parse_int(0, UINT32_MAX), "0", mutable=False),
    _nx("bind-source-addr", _parse_string, ""),
    _nx("max-new-connections-per-cycle", _parse_int(1, 1000), "10"),
    _nx("max-new-tls-connections-per-cycle", _parse_int(1, 1000), "1"),
    _nx("maxmemory-clients", _parse_memory_or_percent(-100, LONG_MAX), "0",
        show=_show_memory_or_percent),
    _nx("io-threads", _parse_int(1, 128), "1", mutable=False),
    _nx("lookahead", _parse_int(1, INT32_MAX), "16"),
    _nx("tls-session-caching", _parse_bool, "yes", show=_show_bool),
    _nx("tls-session-cache-size", _INT_MAX_RANGE, "20480"),
    _nx("tls-session-cache-timeout", _INT_MAX_RANGE, "300"),
    _nx("tls-dh-params-file", _parse_string, ""),
    _nx("tls-ciphersuites", _parse_string, ""),
    # The cluster bus over TLS and the TLS port announced (server/cluster_bus.py).
    Option("tls-cluster", _parse_bool, "no", show=_show_bool),
    # Redis 8.6: a client certificate's CN names its ACL user.
    _nx("tls-auth-clients-user", _parse_enum("off", "cn"), "off",
        show=lambda v: "CN" if v == "cn" else v),
    # Snapshots and the AOF.
    _bool_nx("stop-writes-on-bgsave-error", "yes"),
    _bool_nx("rdb-del-sync-files", "no"),
    _bool_nx("rdb-save-incremental-fsync", "yes"),
    _bool_nx("aof-rewrite-incremental-fsync", "yes"),
    _bool_nx("no-appendfsync-on-rewrite", "no"),
    _bool_nx("aof-timestamp-enabled", "no"),
    _nx("aof-load-corrupt-tail-max-size", _parse_memory_bounded(0, LONG_MAX), "0"),
    # Replication.
    _nx("repl-diskless-sync-max-replicas", _INT_MAX_RANGE, "0"),
    _nx("repl-diskless-load",
        _parse_enum("disabled", "on-empty-db", "swapdb", "flush-before-load"), "disabled"),
    _bool_nx("repl-disable-tcp-nodelay", "no"),
    _bool_nx("replica-lazy-flush", "no"),
    _bool_nx("replica-ignore-maxmemory", "yes"),
    _bool_nx("replica-ignore-disk-write-errors", "no"),
    _nx("replica-announce-ip", _parse_string, ""),
    _nx("replica-announce-port", _parse_int(0, 65535), "0"),
    _nx("replica-full-sync-buffer-limit", _parse_memory_bounded(0, LONG_MAX), "0"),
    # Memory, expiry, lazy freeing, defragmentation, the kernel.
    _nx("maxmemory-eviction-tenacity", _parse_int(0, 100), "10"),
    _nx("active-expire-effort", _parse_int(1, 10), "1"),
    _bool_nx("lazyfree-lazy-eviction", "no"),
    _bool_nx("lazyfree-lazy-expire", "no"),
    _bool_nx("lazyfree-lazy-server-del", "no"),
    # DEL frees as UNLINK does (commands/keys/keys.py)
    Option("lazyfree-lazy-user-del", _parse_bool, "no", show=_show_bool),
    _bool_nx("lazyfree-lazy-user-flush", "no"),
    # Hidden, for tests: microseconds to sleep per key loaded from a snapshot
    # (negative -n: 1 µs once in n keys), as Redis's debugDelay.
    Option("key-load-delay", _parse_int(-(2**31), INT32_MAX), "0", hidden=True),
    _bool_nx("activerehashing", "yes"),
    _bool_nx("dynamic-hz", "yes"),
    _bool_nx("activedefrag", "no"),
    _nx("active-defrag-ignore-bytes", _parse_memory_bounded(1, LONG_MAX), "104857600"),
    _nx("active-defrag-threshold-lower", _parse_int(0, 1000), "10"),
    _nx("active-defrag-threshold-upper", _parse_int(0, 1000), "100"),
    _nx("active-defrag-cycle-min", _parse_int(1, 99), "1"),
    _nx("active-defrag-cycle-max", _parse_int(1, 99), "25"),
    _nx("active-defrag-max-scan-fields", _parse_int(1, LONG_MAX), "1000"),
    _bool_nx("jemalloc-bg-thread", "yes"),
    _nx("oom-score-adj", _parse_enum("no", "yes", "relative", "absolute"), "no",
        show=_show_oom_adj),
    _nx("oom-score-adj-values", _parse_oom_values, "0 200 800", multi_arg=True,
        show=lambda v: " ".join(map(str, v))),
    _bool_nx("disable-thp", "yes", mutable=False),
    _nx("server-cpulist", _parse_string, "", mutable=False),
    _nx("bio-cpulist", _parse_string, "", mutable=False),
    _nx("aof-rewrite-cpulist", _parse_string, "", mutable=False),
    _nx("bgsave-cpulist", _parse_string, "", mutable=False),
    # Data types Tidelog does not have (HyperLogLog, arrays, vector sets) and
    # the slowlog's per-entry caps (Tidelog keeps Redis's 32 and 128).
    _bool_nx("vset-force-single-threaded-execution", "no"),
    _bool_nx("key-memory-histograms", "no"),
    _nx("slowlog-entry-max-argc", _parse_int(2, INT32_MAX), "32"),
    _nx("slowlog-entry-max-string-len", _parse_int(1, LONG_MAX), "128"),
    # Redis Cluster (server/cluster_bus.py reads them; the mutable ones each tick).
    _bool_on("cluster-enabled", "no", mutable=False),
    Option("cluster-config-file", _parse_string, "nodes.conf", mutable=False),
    Option("cluster-port", _parse_int(0, 65535), "0", mutable=False),
    Option("cluster-node-timeout", _parse_int(0, LONG_MAX), "15000"),
    Option("cluster-replica-validity-factor", _INT_MAX_RANGE, "10"),
    Option("cluster-migration-barrier", _INT_MAX_RANGE, "1"),
    _bool_on("cluster-require-full-coverage", "yes"),
    _bool_on("cluster-replica-no-failover", "no"),
    _bool_on("cluster-allow-reads-when-down", "no"),
    _bool_on("cluster-allow-pubsubshard-when-down", "yes"),
    _bool_on("cluster-allow-replica-migration", "yes"),
    Option("cluster-announce-ip", _parse_string, ""),
    Option("cluster-announce-hostname", _parse_hostname, ""),
    Option("cluster-announce-human-nodename", _parse_nodename, ""),
    Option("cluster-announce-port", _parse_int(0, 65535), "0"),
    Option("cluster-announce-bus-port", _parse_int(0, 65535), "0"),
    Option("cluster-announce-tls-port", _parse_int(0, 65535), "0"),
    Option("cluster-preferred-endpoint-type",
           _parse_enum("ip", "hostname", "unknown-endpoint"), "ip"),
    Option("cluster-link-sendbuf-limit", _parse_memory_bounded(0, LONG_MAX), "0"),
    _nx("cluster-compatibility-sample-ratio", _parse_int(0, 100), "0"),
    _bool_on("cluster-slot-stats-enabled", "no"),
    _nx("cluster-slot-migration-write-pause-timeout", _parse_int(0, LONG_MAX), "10000"),
    _nx("cluster-slot-migration-handoff-max-lag-bytes", _parse_memory_bounded(0, LONG_MAX),
        "1048576"),
]})

# Redis's other old names (Redis 7/8 accept each wherever the new one goes).
ALIASES.update({
    "slaveof": "replicaof", "slave-serve-stale-data": "replica-serve-stale-data",
    "slave-read-only": "replica-read-only", "slave-priority": "replica-priority",
    "slave-announce-ip": "replica-announce-ip", "slave-announce-port": "replica-announce-port",
    "slave-lazy-flush": "replica-lazy-flush", "slave-ignore-maxmemory": "replica-ignore-maxmemory",
    "min-slaves-to-write": "min-replicas-to-write", "min-slaves-max-lag": "min-replicas-max-lag",
    "repl-ping-slave-period": "repl-ping-replica-period",
    "cluster-slave-validity-factor": "cluster-replica-validity-factor",
    "cluster-slave-no-failover": "cluster-replica-no-failover",
    "server_cpulist": "server-cpulist", "bio_cpulist": "bio-cpulist",
    "aof_rewrite_cpulist": "aof-rewrite-cpulist", "bgsave_cpulist": "bgsave-cpulist",
})

# Directives Redis 8 still reads but ignores (its deprecated list): one
# value each; they are not options (CONFIG GET does not know them).
DEPRECATED_DIRECTIVES = frozenset({"list-max-ziplist-entries", "list-max-ziplist-value",
                                   "lua-replicate-commands", "io-threads-do-reads"})

# Python logging levels of ``loglevel`` (verbose sits between debug and
# notice; "nothing" is above every level), and the character Redis's log
# lines carry for each.
LOG_VERBOSE = 15
LOG_LEVELS = {"debug": 10, "verbose": LOG_VERBOSE, "notice": 20, "warning": 30, "nothing": 51}


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
        # Directives read (file or command line) that Tidelog accepts but
        # does not act on, each once, in the order first read: the start-up
        # log names them.
        self.no_effect_read: list[str] = []
        # "systemd" or "upstart" when one supervises the process (start-up sets it).
        self.supervised_by: str | None = None
        self._include_depth = 0

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
        return [(n, self.show(n)) for n in OPTIONS
                if not OPTIONS[n].hidden and fnmatch.fnmatchcase(n, pattern)]

    # -- reading redis.conf ---------------------------------------------------
    def load_text(self, text: str) -> None:
        """Apply a redis.conf; raises ConfigError with Redis's line report.

        As Redis reads it: lines split at newlines and trimmed, ``#`` lines
        skipped, words split by :func:`split_config_args`; ``include <path>``
        applies another file (globs allowed) at that point; raises OSError
        for a file that cannot be read."""
        for number, raw in enumerate(text.split("\n"), start=1):
            line = raw.strip(" \t\r\n")
            if not line or line.startswith("#"):
                continue
            words = split_config_args(line)
            if words is None:
                raise _bad_line(number, line, errors.CONFIG_UNBALANCED_QUOTES)
            if not words:
                continue
            name, args = words[0].lower(), words[1:]
            try:
                if name == "include" and len(args) == 1:
                    self.load_file(args[0])
                    continue
                self.apply_directive(name, args)
            except ConfigFileError:  # from an included file: its own report
                raise
            except ConfigError as exc:
                raise _bad_line(number, line, str(exc)) from None

    def load_file(self, path: str) -> None:
        """``include <path>``: the file's directives, here; a path with glob
        characters includes every file matching, in name order (none: nothing).
        A relative path is taken from the current directory, as Redis does."""
        self._include_depth += 1
        try:
            if self._include_depth > 64:  # a file including itself
                raise ConfigError("include nested too deeply")
            if any(c in path for c in "*?["):
                paths = sorted(glob.glob(path))
            else:
                paths = [path]
            for one in paths:
                with open(one, encoding="utf-8", errors="surrogateescape") as fh:
                    self.load_text(fh.read())
        finally:
            self._include_depth -= 1

    def apply_directive(self, name: str, args: list[str]) -> None:
        if name == "user":
            if not args:
                raise ConfigError(errors.CONFIG_WRONG_ARGUMENTS)
            self.users.append([a.encode("utf-8", "surrogateescape") for a in args])
            return
        if name == "sentinel":  # as Redis outside sentinel mode: alone ignored, else refused
            if args:
                raise ConfigError(errors.CONFIG_SENTINEL_DIRECTIVE)
            return
        if name == "loadmodule" and args:
            raise ConfigError(errors.CONFIG_NO_MODULES)
        if name == "rename-command":
            if len(args) != 2:
                raise ConfigError(errors.CONFIG_WRONG_ARGUMENTS)
            self.renames.append((args[0].lower(), args[1].lower()))
            return
        opt = OPTIONS.get(ALIASES.get(name, name))
        if opt is None:
            if name in DEPRECATED_DIRECTIVES and len(args) == 1:
                self._note_no_effect(name)
                return
            raise ConfigError(errors.CONFIG_BAD_DIRECTIVE)
        if opt.no_effect:
            self._note_no_effect(opt.name)
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

    def _note_no_effect(self, name: str) -> None:
        if name not in self.no_effect_read:
            self.no_effect_read.append(name)


def split_config_args(line: str) -> list[str] | None:
    """A config line's words as Redis splits them (sdssplitargs): blanks
    separate words; in double quotes ``\\xHH``, ``\\n``, ``\\r``, ``\\t``,
    ``\\b``, ``\\a`` and ``\\<char>`` are escapes; in single quotes only
    ``\\'``; a closing quote must end the word.  None when quotes are
    unbalanced or a closing quote is followed by more of the word.  Bytes
    ``\\xHH`` makes above 0x7f come back as surrogate escapes."""
    words: list[str] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in " \t\n\r\v\f":
            i += 1
        if i >= n:
            return words
        current: list[str] = []
        in_double = in_single = False
        while True:
            c = line[i] if i < n else ""
            if in_double:
                if c == "\\" and i + 3 < n and line[i + 1] == "x" and \
                        _is_hex(line[i + 2]) and _is_hex(line[i + 3]):
                    byte = int(line[i + 2:i + 4], 16)
                    current.append(chr(byte) if byte < 0x80 else
                                   bytes([byte]).decode("utf-8", "surrogateescape"))
                    i += 3
                elif c == "\\" and i + 1 < n:
                    i += 1
                    current.append(_ESCAPES.get(line[i], line[i]))
                elif c == '"':
                    if i + 1 < n and line[i + 1] not in " \t\n\r\v\f":
                        return None
                    i += 1
                    break
                elif not c:
                    return None
                else:
                    current.append(c)
            elif in_single:
                if c == "\\" and i + 1 < n and line[i + 1] == "'":
                    i += 1
                    current.append("'")
                elif c == "'":
                    if i + 1 < n and line[i + 1] not in " \t\n\r\v\f":
                        return None
                    i += 1
                    break
                elif not c:
                    return None
                else:
                    current.append(c)
            elif c in (" ", "\n", "\r", "\t", ""):
                break
            elif c == '"':
                in_double = True
            elif c == "'":
                in_single = True
            else:
                current.append(c)
            i += 1
        words.append("".join(current))


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "a": "\a"}


def _is_hex(c: str) -> bool:
    return c in "0123456789abcdefABCDEF"


def _bad_line(number: int, raw: str, why: str) -> ConfigError:
    return ConfigFileError(errors.config_file_error(REDIS_VERSION, number, raw.strip(), why))
