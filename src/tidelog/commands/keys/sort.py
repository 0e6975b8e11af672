"""SORT and SORT_RO: the elements of a list, set or sorted set, sorted
numerically or as strings, by themselves or by other keys' values, with
LIMIT, GET and (SORT only) STORE.

Which values can be sorted is a table, :data:`SORTABLE`: value class ->
(elements(value) -> list of bytes in the type's own order, ordered).  An
*ordered* type (list, sorted set) keeps its own order under ``BY nosort``
(a pattern without ``*``), reversed by DESC; an unordered one (set) is
returned in its iteration order, and sorted as strings when the result is
STOREd (Redis forces ALPHA then, so that replicas store the same list).
Lists, sets and sorted sets (in score order) are registered here.  STORE
writes a list.

Patterns (Redis's ``lookupKeyByPattern``): ``#`` is the element itself;
otherwise the first ``*`` is replaced by the element and the key read as a
string, or, with ``->field`` after the ``*``, as a hash field.  A missing
key, field, or a value of another type reads as nil (sorts as 0, or first
with ALPHA).

Cost: O(N + M log M) for N elements of which M are sorted (all of them
unless ``BY nosort``), plus O(N * G) for G GET patterns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC, NOTIFY_LIST
from ...errors import (
    SORT_BY_DENIED,
    SORT_GET_DENIED,
    SORT_NOT_DOUBLE,
    SYNTAX,
    WRONGTYPE,
    CommandError,
)
from ...types.hash import Hash
from ...types.list import List
from ...types.set import Set
from ...types.zset import ZSet
from ..args import ArgReader
from ..key_specs import KEY_READ, SORT_BY_GET, SORT_STORE, ks
from ..lookup import lookup_read
from ..table import COMMANDS, command

if TYPE_CHECKING:
    from ..contract import Ctx

# value class -> (elements(value), ordered)
SORTABLE: dict[type, tuple[Callable[[Any], list[bytes]], bool]] = {
    Set: (lambda value: value.members(), False),
    List: (lambda value: list(value.items), True),
    ZSet: (lambda value: list(value), True),
}

_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf(?:inity)?|nan)",
                      re.IGNORECASE)
_HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?")
_SPACE = b" \t\n\v\f\r"
_TINY = 2.2250738585072014e-308


def strtod_whole(text: bytes) -> float | None:
    """C's strtod over the whole text as SORT takes it: leading white space
    skipped, nothing may follow the number, no overflow or underflow, no
    NaN; an empty (or all-blank) text is 0.  None when refused."""
    body = text.lstrip(_SPACE)
    if not body:
        return 0.0
    m = _HEX.fullmatch(body)
    if m is not None:
        sign = -1.0 if body[:1] == b"-" else 1.0
        digits = body.lstrip(b"+-")[2:].decode()
        mant, _, exp = digits.lower().partition("p")
        try:
            value = sign * float.fromhex("0x" + (mant or "0") + "p" + (exp or "0"))
        except OverflowError:
            return None
    elif _DECIMAL.fullmatch(body):
        value = float(body)
        lowered = body.lower()
        if b"n" not in lowered and math.isinf(value):
            return None  # overflow
    else:
        return None
    if math.isnan(value):
        return None
    if value != 0 and abs(value) < _TINY:
        return None  # underflow (ERANGE)
    if value == 0 and any(0x31 <= c <= 0x39 for c in body.split(b"e")[0].split(b"E")[0]
                          .split(b"p")[0].split(b"P")[0].lstrip(b"+-0xX.")):
        return None  # a nonzero number too small for a double
    return value


def _reads_every_key(ctx: Ctx, readonly: bool) -> bool:
    """BY (with a pattern) and GET read keys the command names only
    through the sorted values, so ACL lets a user use them only when a
    selector that allows this SORT may read every key."""
    user = ctx.client.user
    if user is None or user.unrestricted:
        return True
    spec = COMMANDS["sort_ro" if readonly else "sort"]
    allowed: bool = user.full_key_access(spec, ctx.argv, KEY_READ)
    return allowed


def lookup_pattern(ctx: Ctx, pattern: bytes, element: bytes) -> bytes | None:
    """Redis's ``lookupKeyByPattern``: the string (or hash field) that
    ``pattern`` names for ``element``, None if there is none."""
    if pattern == b"#":
        return element
    star = pattern.find(b"*")
    if star < 0:
        return None
    arrow = pattern.find(b"->", star + 1)
    field = None
    if arrow >= 0 and arrow + 2 < len(pattern):
        field = pattern[arrow + 2:]
        pattern = pattern[:arrow]
    value = ctx.db.get(pattern[:star] + element + pattern[star + 1:])
    if value is None:
        return None
    if field is not None:
        return value.get(field) if type(value) is Hash else None
    return value if type(value) is bytes else None


def _sort(ctx: Ctx, argv: list[bytes], readonly: bool) -> object:
    desc = alpha = dontsort = False
    limit_start, limit_count = 0, -1
    sortby: bytes | None = None
    store: bytes | None = None
    gets: list[bytes] = []
    r = ArgReader(argv, start=2)
    while r.more():
        option = r.next_upper()
        left = r.remaining()
        if option == b"ASC":
            desc = False
        elif option == b"DESC":
            desc = True
        elif option == b"ALPHA":
            alpha = True
        elif option == b"LIMIT" and left >= 2:
            limit_start = r.next_int()
            limit_count = r.next_int()
        elif option == b"STORE" and left >= 1 and not readonly:
            store = r.next_bytes()
        elif option == b"BY" and left >= 1:
            sortby = r.next_bytes()
            dontsort = b"*" not in sortby
            if not dontsort and not _reads_every_key(ctx, readonly):
                raise CommandError(SORT_BY_DENIED)
        elif option == b"GET" and left >= 1:
            if not _reads_every_key(ctx, readonly):
                raise CommandError(SORT_GET_DENIED)
            gets.append(r.next_bytes())
        else:
            raise CommandError(SYNTAX)
    value = lookup_read(ctx, argv[1])
    if value is None:
        elements: list[bytes] = []
        ordered = True
    else:
        source = SORTABLE.get(type(value))
        if source is None:
            raise CommandError(WRONGTYPE)
        elements, ordered = source[0](value), source[1]
    if dontsort and not ordered and (store is not None or ctx.client is ctx.engine.scripts.client):
        # the same list on every replica, and for every run of a script
        dontsort, alpha, sortby = False, True, None
    count = len(elements)
    start = min(max(limit_start, 0), count)
    limit_count = min(max(limit_count, -1), count)
    end = count - 1 if limit_count < 0 else start + limit_count - 1
    if start >= count:
        start, end = count - 1, count - 2
    end = min(end, count - 1)

    if dontsort:
        if ordered and desc:
            elements = elements[::-1]
    else:
        elements = _sorted(ctx, elements, sortby, alpha, desc)
    chosen = elements[start:end + 1] if end >= start else []

    if gets:
        output = [lookup_pattern(ctx, pattern, element) for element in chosen
                  for pattern in gets]
    else:
        output = list(chosen)
    if store is None:
        return output
    db = ctx.db
    if output:
        db.set(store, List([b"" if v is None else v for v in output],
                           ctx.config["list-max-listpack-size"]))
        ctx.modified(store, len(output))
        ctx.ready(store)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_LIST, b"sortstore", store)
    elif db.delete(store):
        ctx.modified(store)
        ctx.ready(store)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_GENERIC, b"del", store)
    return len(output)


def _sorted(ctx: Ctx, elements: list[bytes], sortby: bytes | None, alpha: bool,
            desc: bool) -> list[bytes]:
    if alpha:
        if sortby is None:
            return sorted(elements, reverse=desc)
        keyed = []
        for element in elements:
            by = lookup_pattern(ctx, sortby, element)
            # strcoll in the C locale: the bytes up to the first NUL; nil first
            keyed.append(((0, b"") if by is None else (1, by.split(b"\0", 1)[0]), element))
        keyed.sort(key=lambda pair: pair[0], reverse=desc)
        return [element for _, element in keyed]
    scored = []
    for element in elements:
        by = element if sortby is None else lookup_pattern(ctx, sortby, element)
        score = 0.0 if by is None else strtod_whole(by)
        if score is None:
            raise CommandError(SORT_NOT_DOUBLE)
        scored.append((score, element))
    scored.sort(reverse=desc)
    return [element for _, element in scored]


_SORT_COMPLEXITY = ("O(N+M*log(M)) where N is the number of elements in the list or set to sort, "
                    "and M the number of returned elements. When the elements are not sorted, "
                    "complexity is O(N).")


@command("sort", arity=-2, flags="write denyoom movablekeys", keys=(1, 1, 1), group="generic",
         since="1.0.0", categories=("-@keyspace", "@set", "@sortedset", "@list", "@dangerous"),
         complexity=_SORT_COMPLEXITY,
         summary="Sort the elements in a list, set or sorted set",
         key_specs=[ks("RO access", 1), SORT_BY_GET, SORT_STORE])
def sort(ctx: Ctx, argv: list[bytes]) -> object:
    """SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC]
    [ALPHA] [STORE destination]"""
    return _sort(ctx, argv, readonly=False)


@command("sort_ro", arity=-2, flags="readonly movablekeys", keys=(1, 1, 1), group="generic", since="7.0.0",
         categories=("-@keyspace", "@set", "@sortedset", "@list", "@dangerous"),
         complexity=_SORT_COMPLEXITY,
         summary="Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
         key_specs=[ks("RO access", 1), SORT_BY_GET])
def sort_ro(ctx: Ctx, argv: list[bytes]) -> object:
    """SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC]
    [ALPHA]"""
    return _sort(ctx, argv, readonly=True)
