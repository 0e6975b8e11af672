"""Where a command's keys are, and what it does with them.

Redis 7 describes each command's keys with *key specs* (COMMAND INFO's tenth
element): where the search for keys begins (an index, or the keyword keys
follow, as XREAD's ``STREAMS``), how keys are found from there (a range, or
a count argument, as EVAL's ``numkeys``), and flags saying what the command
does with each key (``RO``/``RW``/``OW``/``RM``; ``access``, ``insert``,
``update``, ``delete``).  COMMAND INFO and COMMAND GETKEYS show them, and ACL
reads them to tell which keys a command touches and whether it reads or
writes them (:func:`acl_keys`).

Each command's key specs and COMMAND INFO *tips* are given where it is
registered (``@command(..., tips=..., key_specs=[ks(...)])``, see
:mod:`.table`), written from what redis-server 7.0.15 answers to
``COMMAND INFO`` (and from Redis 8's command pages for the newer commands);
a command without key specs gets one derived from its flags.  This module
holds the shared pieces (:func:`ks`, the tips written often, SORT's
finders) and what reads the key specs.
"""

from __future__ import annotations

from typing import Any

from .table import CommandSpec
from .table import KeySpec as KeySpec  # defined beside CommandSpec, which holds them


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


SORT_BY_GET = ks("RO access", None, notes="For the optional BY/GET keyword. It is marked "
                   "'unknown' because the key names derive from the content of the key we sort")
SORT_STORE = ks("OW update", None, notes="For the optional STORE keyword. It is marked "
                  "'unknown' because the keyword can appear anywhere in the argument array",
                  find=_sort_store_key)


ND = "nondeterministic_output"
SCRIPT_RW = "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"
SCRIPT_RO = "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"
ALL_SHARDS = "request_policy:all_shards"

def key_specs(spec: CommandSpec) -> list[KeySpec]:
    """The command's key specs: its own (``@command(key_specs=...)``), else
    one derived from its flags and ``keys``."""
    if spec.key_specs is not None:
        return spec.key_specs
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


def fixed_key_ranges(spec: CommandSpec, not_keys: bool = False
                     ) -> list[tuple[int, int, int]] | None:
    """Where a command's keys sit when every key spec gives fixed positions
    (an index to begin and a range to find): ``(begin, lastkey, keystep)``
    per key spec, ``not_key`` ones (shard channels) left out unless
    ``not_keys`` (the cluster routes by them too).  None when one searches by a
    keyword, counts its keys, has a finder of its own or the command finds
    its keys itself (its ``key_finder``, XREAD's STREAMS): then
    :func:`acl_keys` must find them per call.  O(key specs); callers keep
    the answer per command."""
    if spec.key_finder is not None or spec.name in ("xread", "xreadgroup"):
        return None
    ranges = []
    for ks in key_specs(spec):
        if not isinstance(ks.begin, int) or ks.keynum is not None or ks.find is not None:
            return None
        if not_keys or "not_key" not in ks.flags:
            ranges.append((ks.begin, ks.lastkey, ks.keystep))
    return ranges


def command_key_positions(spec: CommandSpec, argv: list[bytes]) -> list[tuple[int, KeySpec]]:
    """(argv index, key spec) of every key in a full command."""
    finder = spec.key_finder
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
