"""Geo commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE
and the deprecated GEORADIUS, GEORADIUSBYMEMBER, GEORADIUS_RO and
GEORADIUSBYMEMBER_RO.

A geo set is a plain sorted set (:class:`~tidelog.types.zset.ZSet`) whose
scores are 52-bit geohashes; the arithmetic is :mod:`tidelog.types.geohash`.
A search scans the score ranges of nine geohash cells around the centre and
keeps the members inside the circle or box, as Redis does, so that the same
members come back in the same order.

Replies: distances are bulk strings with four decimals (RESP3 too);
coordinates are doubles (RESP3 doubles, RESP2 bulk strings) in the shortest
form that reads back as the same double, as Redis 7.2+ replies them (7.0
printed them with ``%.17Lf``); WITHHASH is the integer score.

Propagation (as redis-server 7.0.15 writes its AOF): GEOADD goes out as the
ZADD it amounts to (``zadd key [options] <score> <member> ...``, the
options as sent, the scores as integers) and fires ``zadd`` events;
GEOSEARCHSTORE and GEORADIUS[BYMEMBER] with STORE/STOREDIST propagate
themselves when they wrote or deleted the destination (events
``geosearchstore`` / ``georadiusstore``, or ``del`` for an empty result).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC, NOTIFY_ZSET
from ...errors import (
    GEO_ANY_NEEDS_COUNT,
    GEO_BAD_LONLAT,
    GEO_BAD_UNIT,
    GEO_BOX_NEGATIVE,
    GEO_COUNT_POSITIVE,
    GEO_HEIGHT_NOT_FLOAT,
    GEO_NEED_BY,
    GEO_NEED_FROM,
    GEO_NO_MEMBER,
    GEO_RADIUS_NEGATIVE,
    GEO_RADIUS_NOT_FLOAT,
    GEO_STORE_WITH,
    GEO_WIDTH_NOT_FLOAT,
    SYNTAX,
    WRONGTYPE,
    CommandError,
)
from ...resp.replies import NULL_ARRAY
from ...types import geohash
from ...types.geohash import Shape
from ...types.zset import ZSet
from ..args import ArgReader
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command
from .common import limits, parse_score
from .zsets import add_pairs

if TYPE_CHECKING:
    from ..contract import Ctx



# What one unit is in metres.
_UNITS = {b"m": 1.0, b"km": 1000.0, b"ft": 0.3048, b"mi": 1609.34}


def _word(arg: bytes) -> bytes:
    """An option as Redis compares it (strcasecmp: up to a NUL byte, any case)."""
    return arg.split(b"\0", 1)[0].lower()


def _unit(arg: bytes) -> float:
    to_m = _UNITS.get(_word(arg))
    if to_m is None:
        raise CommandError(GEO_BAD_UNIT)
    return to_m


def _lonlat(lon_arg: bytes, lat_arg: bytes) -> tuple[float, float]:
    """A position argument pair: both numbers first, then the limits."""
    lon = parse_score(lon_arg)
    lat = parse_score(lat_arg)
    if not geohash.valid(lon, lat):
        raise CommandError(GEO_BAD_LONLAT % (lon, lat))
    return lon, lat


def _radius(value: bytes, unit: bytes) -> tuple[float, float]:
    """(radius, metres per unit) of ``<radius> <unit>``."""
    radius = parse_score(value, GEO_RADIUS_NOT_FLOAT)
    if radius < 0:
        raise CommandError(GEO_RADIUS_NEGATIVE)
    return radius, _unit(unit)


def _box(width_arg: bytes, height_arg: bytes, unit: bytes) -> tuple[float, float, float]:
    """(width, height, metres per unit) of ``<width> <height> <unit>``."""
    width = parse_score(width_arg, GEO_WIDTH_NOT_FLOAT)
    height = parse_score(height_arg, GEO_HEIGHT_NOT_FLOAT)
    if height < 0 or width < 0:
        raise CommandError(GEO_BOX_NEGATIVE)
    return width, height, _unit(unit)


def _read_geo(ctx: Ctx, key: bytes) -> ZSet | None:
    value = lookup_read(ctx, key)
    if value is None or type(value) is ZSet:
        return value
    raise CommandError(WRONGTYPE)


def _member_position(z: ZSet, member: bytes) -> tuple[float, float]:
    score = z.score(member)
    if score is None:
        raise CommandError(GEO_NO_MEMBER)
    return geohash.decode_score(score)


# -- GEOADD ---------------------------------------------------------------------------------
@command("geoadd", arity=-5, flags="write denyoom", keys=(1, 1, 1), group="geo",
         since="3.2.0",
         complexity="O(log(N)) for each item added, where N is the number of elements in the "
                    "sorted set.",
         summary="Add one or more geospatial items in the geospatial index represented using a "
                 "sorted set",
         key_specs=[ks("RW update", 1)])
def geoadd(ctx: Ctx, argv: list[bytes]) -> object:
    """GEOADD key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]

    Every position is checked before anything is written; then it is the
    ZADD of the encoded scores (propagated as that ZADD).  O(M log N)."""
    nx = xx = ch = False
    r = ArgReader(argv, 2)
    while r.more():
        word = _word(r.peek())  # type: ignore[arg-type]
        if word == b"nx":
            nx = True
        elif word == b"xx":
            xx = True
        elif word == b"ch":
            ch = True
        else:
            break
        r.next_bytes()
    rest = r.remaining()
    if rest % 3 or (nx and xx) or rest == 0:  # no point at all: ZADD's syntax error
        raise CommandError(SYNTAX)
    zadd_argv = [b"zadd", *argv[1:r.pos]]
    pairs = []
    while r.more():
        lon_arg, lat_arg, member = r.take(3)
        lon, lat = _lonlat(lon_arg, lat_arg)
        bits: int = geohash.encode(lon, lat)  # type: ignore[assignment]  # 52 bits at step 26
        pairs.append((member, float(bits)))
        zadd_argv += [b"%d" % bits, member]
    # Redis replaces the command with the ZADD and runs that: the ZADD is
    # what propagates.
    original = ctx.argv
    ctx.argv = zadd_argv
    try:
        return add_pairs(ctx, argv[1], pairs, nx, xx, False, False, ch, False)
    finally:
        ctx.argv = original


# -- GEOPOS, GEOHASH, GEODIST ----------------------------------------------------------------
@command("geopos", arity=-2, flags="readonly", keys=(1, 1, 1), group="geo", since="3.2.0",
         complexity="O(1) for each member requested.",
         summary="Returns longitude and latitude of members of a geospatial index",
         key_specs=[ks("RO access", 1)])
def geopos(ctx: Ctx, argv: list[bytes]) -> object:
    """GEOPOS key [member [member ...]]

    [longitude, latitude] per member, a null array for a missing one.  O(M)."""
    z = _read_geo(ctx, argv[1])
    out: list[Any] = []
    for member in argv[2:]:
        score = None if z is None else z.score(member)
        if score is None:
            out.append(NULL_ARRAY)
        else:
            out.append(list(geohash.decode_score(score)))
    return out


@command("geohash", arity=-2, flags="readonly", keys=(1, 1, 1), group="geo", since="3.2.0",
         complexity="O(1) for each member requested.",
         summary="Returns members of a geospatial index as standard geohash strings",
         key_specs=[ks("RO access", 1)])
def geohash_command(ctx: Ctx, argv: list[bytes]) -> object:
    """GEOHASH key [member [member ...]]

    The 11-character standard geohash per member, null for a missing one.  O(M)."""
    z = _read_geo(ctx, argv[1])
    out: list[Any] = []
    for member in argv[2:]:
        score = None if z is None else z.score(member)
        out.append(None if score is None else geohash.geohash_text(score))
    return out


@command("geodist", arity=-4, flags="readonly", keys=(1, 1, 1), group="geo", since="3.2.0",
         complexity="O(1)", summary="Returns the distance between two members of a geospatial "
                                   "index",
         key_specs=[ks("RO access", 1)])
def geodist(ctx: Ctx, argv: list[bytes]) -> object:
    """GEODIST key member1 member2 [M | KM | FT | MI]

    The distance between two members (four decimals), null when the key or
    either member is missing.  O(1)."""
    to_m = 1.0
    if len(argv) == 5:
        to_m = _unit(argv[4])
    elif len(argv) > 5:
        raise CommandError(SYNTAX)
    z = _read_geo(ctx, argv[1])
    if z is None:
        return None
    first = z.score(argv[2])
    second = z.score(argv[3])
    if first is None or second is None:
        return None
    lon1, lat1 = geohash.decode_score(first)
    lon2, lat2 = geohash.decode_score(second)
    return geohash.format_distance(geohash.distance(lon1, lat1, lon2, lat2) / to_m)


# -- searches ------------------------------------------------------------------------------------
# How a search command reads its arguments.
_COORDS, _MEMBER, _SEARCH = 1, 2, 3


class _Search:
    """A parsed search: the shape, the options, where to store."""

    __slots__ = ("centre", "radius", "box", "to_m", "withdist", "withhash", "withcoord",
                 "sort", "count", "any", "store", "storedist")

    def __init__(self) -> None:
        self.centre: tuple[float, float] | None = None   # None: a member of a missing key
        self.radius: float | None = None
        self.box: tuple[float, float] | None = None
        self.to_m = 1.0
        self.withdist = self.withhash = self.withcoord = False
        self.sort = 0                # 0: as found, 1: nearest first, -1: farthest first
        self.count = 0               # 0: all
        self.any = False
        self.store: bytes | None = None
        self.storedist = False

    def shape(self) -> Shape:
        lon, lat = self.centre  # type: ignore[misc]
        if self.box is not None:
            return Shape(lon, lat, self.to_m, None, self.box[0], self.box[1])
        return Shape(lon, lat, self.to_m, self.radius)


def _parse_search(argv: list[bytes], z: ZSet | None, kind: int, read_only: bool,
                  store: bool) -> _Search:
    """The arguments of a search, checked in Redis's order: the fixed ones
    (position or member, radius), the options one by one (a FROMMEMBER is
    looked up where it stands), then how they combine."""
    s = _Search()
    if kind == _COORDS:
        s.centre = _lonlat(argv[2], argv[3])
        s.radius, s.to_m = _radius(argv[4], argv[5])
        r = ArgReader(argv, 6)
    elif kind == _MEMBER:
        if z is not None:
            s.centre = _member_position(z, argv[2])
            s.radius, s.to_m = _radius(argv[3], argv[4])
        r = ArgReader(argv, 5)
    else:
        r = ArgReader(argv, 3 if store else 2)
        if store:
            s.store = argv[1]
    search = kind == _SEARCH
    frommember = fromloc = byradius = bybox = False
    while r.more():
        word = _word(r.next_bytes())
        left = r.remaining()
        if word == b"withdist":
            s.withdist = True
        elif word == b"withhash":
            s.withhash = True
        elif word == b"withcoord":
            s.withcoord = True
        elif word == b"any":
            s.any = True
        elif word == b"asc":
            s.sort = 1
        elif word == b"desc":
            s.sort = -1
        elif word == b"count" and left >= 1:
            s.count = r.next_int()
            if s.count <= 0:
                raise CommandError(GEO_COUNT_POSITIVE)
        elif word in (b"store", b"storedist") and left >= 1 and not read_only and not search:
            s.store = r.next_bytes()
            s.storedist = word == b"storedist"
        elif word == b"storedist" and search and store:
            s.storedist = True
        elif word == b"frommember" and left >= 1 and search and not fromloc:
            member = r.next_bytes()
            if z is not None:
                s.centre = _member_position(z, member)
            frommember = True
        elif word == b"fromlonlat" and left >= 2 and search and not frommember:
            lon_arg, lat_arg = r.take(2)
            s.centre = _lonlat(lon_arg, lat_arg)
            fromloc = True
        elif word == b"byradius" and left >= 2 and search and not bybox:
            value, unit = r.take(2)
            s.radius, s.to_m = _radius(value, unit)
            s.box = None
            byradius = True
        elif word == b"bybox" and left >= 3 and search and not byradius:
            width, height, unit = r.take(3)
            w, h, s.to_m = _box(width, height, unit)
            s.box = (w, h)
            bybox = True
        else:
            raise CommandError(SYNTAX)
    if s.store is not None and (s.withdist or s.withhash or s.withcoord):
        raise CommandError(GEO_STORE_WITH % (
            b"GEOSEARCHSTORE" if search and store else b"STORE option in GEORADIUS"))
    if search and not (frommember or fromloc):
        raise CommandError(GEO_NEED_FROM % argv[0])
    if search and not (byradius or bybox):
        raise CommandError(GEO_NEED_BY % argv[0])
    if s.any and not s.count:
        raise CommandError(GEO_ANY_NEEDS_COUNT)
    return s


def _find(z: ZSet, shape: Shape, limit: int) -> list[tuple[bytes, float, float, float, float]]:
    """(member, score, distance in metres, lon, lat) of every member inside
    ``shape``, cell by cell in the scan order, each cell by score; stops at
    ``limit`` found (0: no limit).  O(log N + C) for C members in the
    cells scanned."""
    inside = geohash.shape_filter(shape)
    found: list[tuple[bytes, float, float, float, float]] = []
    cells = geohash.search_cells(shape)
    last: geohash.Cell | None = None
    for i, cell in enumerate(cells):
        if cell is None:
            continue
        # Large searches can give equal neighbours: a cell equal to the one
        # scanned last is skipped (the centre's cell is never compared).
        if last is not None and cell == last:
            continue
        if limit and len(found) >= limit:
            break
        low, high = geohash.score_range(cell)
        start = z.score_index(float(low), False, upper=False)
        stop = z.score_index(float(high), True, upper=True)
        for member, score in z.slice(start, stop):
            lon, lat = geohash.decode_score(score)
            d = inside(lon, lat)
            if d is not None:
                found.append((member, score, d, lon, lat))
                if limit and len(found) >= limit:
                    break
        if i:
            last = cell
    return found


def _distance_of(item: tuple[Any, ...]) -> float:
    distance: float = item[2]
    return distance


def _search(ctx: Ctx, argv: list[bytes], kind: int, read_only: bool = False,
            store: bool = False) -> object:
    key = argv[2] if store else argv[1]
    z = _read_geo(ctx, key)
    s = _parse_search(argv, z, kind, read_only, store)
    if z is None:
        if s.store is not None:
            if ctx.db.delete(s.store):
                ctx.modified(s.store)
                ctx.ready(s.store)
                ctx.propagate_argv()
                ctx.notify(NOTIFY_GENERIC, b"del", s.store)
            return 0
        return []
    sort = s.sort
    if s.count and not sort and not s.any:
        sort = 1
    shape = s.shape()
    found = _find(z, shape, s.count if s.any else 0)
    if sort:
        geohash.sort_nearest(found, _distance_of, s.count or len(found), sort < 0)
    if s.count:
        del found[s.count:]
    if s.store is not None:
        return _store(ctx, s.store, found, shape.to_m if s.storedist else 0.0,
                      b"geosearchstore" if kind == _SEARCH else b"georadiusstore")
    to_m = shape.to_m
    if not (s.withdist or s.withhash or s.withcoord):
        return [item[0] for item in found]
    out: list[Any] = []
    for member, score, d, lon, lat in found:
        row: list[Any] = [member]
        if s.withdist:
            row.append(geohash.format_distance(d / to_m))
        if s.withhash:
            row.append(geohash.score_int(score))
        if s.withcoord:
            row.append([lon, lat])
        out.append(row)
    return out


def _store(ctx: Ctx, dst: bytes, found: list[Any], dist_unit: float, event: bytes) -> int:
    """Put the results at ``dst`` as a sorted set (scores: the geohashes, or
    with ``dist_unit`` the distances in that unit), replacing any value; an
    empty result deletes ``dst``."""
    if found:
        if dist_unit:
            pairs = [(item[0], item[2] / dist_unit) for item in found]
        else:
            pairs = [(item[0], item[1]) for item in found]
        ctx.db.set(dst, ZSet.built(pairs, limits(ctx)))
        ctx.modified(dst, len(found))
        ctx.ready(dst)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_ZSET, event, dst)
    elif ctx.db.delete(dst):
        ctx.modified(dst)
        ctx.ready(dst)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_GENERIC, b"del", dst)
    return len(found)


_SEARCH_COMPLEXITY = ("O(N+log(M)) where N is the number of elements in the grid-aligned "
                      "bounding box area around the shape provided as the filter and M is the "
                      "number of items inside the shape")
_RADIUS_COMPLEXITY = ("O(N+log(M)) where N is the number of elements inside the bounding box of "
                      "the circular area delimited by center and radius and M is the number of "
                      "items inside the index.")


@command("geosearch", arity=-7, flags="readonly", keys=(1, 1, 1), group="geo", since="6.2.0",
         complexity=_SEARCH_COMPLEXITY,
         summary="Query a sorted set representing a geospatial index to fetch members inside an "
                 "area of a box or a circle.",
         key_specs=[ks("RO access", 1)])
def geosearch(ctx: Ctx, argv: list[bytes]) -> object:
    """GEOSEARCH key <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]

    Members inside a circle or box.  O(N + log M) for N members in the cells
    scanned."""  # noqa: E501 (the syntax line, whole)
    return _search(ctx, argv, _SEARCH)


@command("geosearchstore", arity=-8, flags="write denyoom", keys=(1, 2, 1), group="geo",
         since="6.2.0", complexity=_SEARCH_COMPLEXITY,
         summary="Query a sorted set representing a geospatial index to fetch members inside an "
                 "area of a box or a circle, and store the result in another key.",
         key_specs=[ks("OW update", 1), ks("RO access", 2)])
def geosearchstore(ctx: Ctx, argv: list[bytes]) -> object:
    """GEOSEARCHSTORE destination source <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]] [STOREDIST]

    GEOSEARCH's members stored at destination.  O(N + log M)."""  # noqa: E501 (the syntax line, whole)
    return _search(ctx, argv, _SEARCH, store=True)


@command("georadius", arity=-6, flags="write denyoom movablekeys", keys=(1, 1, 1), group="geo",
         since="3.2.0", complexity=_RADIUS_COMPLEXITY,
         summary="Query a sorted set representing a geospatial index to fetch members matching "
                 "a given maximum distance from a point",
         key_specs=[ks("RO access", 1),
                    ks("OW update", "STORE", startfrom=6),
                    ks("OW update", "STOREDIST", startfrom=6)])
def georadius(ctx: Ctx, argv: list[bytes]) -> object:
    """GEORADIUS key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]

    Deprecated (GEOSEARCH).  O(N + log M)."""  # noqa: E501 (the syntax line, whole)
    return _search(ctx, argv, _COORDS)


@command("georadiusbymember", arity=-5, flags="write denyoom movablekeys", keys=(1, 1, 1),
         group="geo", since="3.2.0",
         complexity="O(N+log(M)) where N is the number of elements inside the bounding box of "
                    "the circular area delimited by center and radius and M is the number of "
                    "items inside the index.",
         summary="Query a sorted set representing a geospatial index to fetch members matching "
                 "a given maximum distance from a member",
         key_specs=[ks("RO access", 1),
                    ks("OW update", "STORE", startfrom=5),
                    ks("OW update", "STOREDIST", startfrom=5)])
def georadiusbymember(ctx: Ctx, argv: list[bytes]) -> object:
    """GEORADIUSBYMEMBER key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]

    Deprecated (GEOSEARCH).  O(N + log M)."""  # noqa: E501 (the syntax line, whole)
    return _search(ctx, argv, _MEMBER)


@command("georadius_ro", arity=-6, flags="readonly", keys=(1, 1, 1), group="geo",
         since="3.2.10", complexity=_RADIUS_COMPLEXITY,
         summary="A read-only variant for GEORADIUS",
         key_specs=[ks("RO access", 1)])
def georadius_ro(ctx: Ctx, argv: list[bytes]) -> object:
    """GEORADIUS_RO key longitude latitude radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]

    Deprecated (GEOSEARCH).  O(N + log M)."""  # noqa: E501 (the syntax line, whole)
    return _search(ctx, argv, _COORDS, read_only=True)


@command("georadiusbymember_ro", arity=-5, flags="readonly", keys=(1, 1, 1), group="geo",
         since="3.2.10", complexity=_RADIUS_COMPLEXITY,
         summary="A read-only variant for GEORADIUSBYMEMBER",
         key_specs=[ks("RO access", 1)])
def georadiusbymember_ro(ctx: Ctx, argv: list[bytes]) -> object:
    """GEORADIUSBYMEMBER_RO key member radius <M | KM | FT | MI> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]

    Deprecated (GEOSEARCH).  O(N + log M)."""  # noqa: E501 (the syntax line, whole)
    return _search(ctx, argv, _MEMBER, read_only=True)
