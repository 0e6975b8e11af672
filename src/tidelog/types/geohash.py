"""Geohash arithmetic for the geo commands: pure numbers, no keys, no wire.

A geo set is a sorted set whose scores are 52-bit geohashes.  A position
(longitude, latitude) becomes two 26-bit cell numbers -- the fraction of the
longitude range [-180, 180] and of the latitude range [-85.05112878,
85.05112878] (the Web Mercator limits; the poles cannot be stored) scaled by
2**26 and truncated -- whose bits are interleaved, latitude in the even bits,
longitude in the odd ones::

    bit  51    50    49    48   ...   1     0
         lon25 lat25 lon24 lat24 ... lon0  lat0

A score decodes to the centre of its cell.  Everything here follows Redis's
arithmetic step for step (the same double operations in the same order, the
same 64-bit wrap-arounds), because the digits clients see come out of it:

* :func:`encode` / :func:`decode_score` -- position <-> cell;
* :func:`geohash_text` -- the 11-character standard geohash (latitude range
  -90..90), as GEOHASH shows it;
* :func:`search_cells` -- the cell holding a search centre and its eight
  neighbours, at a precision picked from the search radius, as score ranges
  to scan;
* :func:`distance`, :func:`in_circle`, :func:`in_box` -- the haversine
  distance on a sphere of radius 6372797.560856 m and the shape filters;
* :func:`format_distance` -- a distance with four decimals;
* :func:`sort_nearest` -- results by distance, ties where Redis leaves them.

Costs: every function but the sort is O(1) (a few dozen float operations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

STEP_MAX = 26                     # bits per coordinate: 52-bit scores
LON_MIN, LON_MAX = -180.0, 180.0
LAT_MIN, LAT_MAX = -85.05112878, 85.05112878
EARTH_RADIUS_M = 6372797.560856   # the quadratic mean radius of WGS-84
MERCATOR_MAX = 20037726.37        # half the Mercator world's width, in metres
DEG_RAD = math.pi / 180.0
ALPHABET = b"0123456789bcdefghjkmnpqrstuvwxyz"

_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1
_EVEN = 0x5555555555555555        # latitude bits
_ODD = 0xAAAAAAAAAAAAAAAA         # longitude bits


class Cell(NamedTuple):
    """A geohash cell: ``bits`` (2 * ``step`` bits, more at the upper edge
    of the ranges, see :func:`encode`) at a precision of ``step`` bits per
    coordinate."""

    bits: int
    step: int


class Area(NamedTuple):
    """The rectangle a cell covers, in degrees."""

    lon_min: float
    lon_max: float
    lat_min: float
    lat_max: float


def valid(lon: float, lat: float) -> bool:
    """Whether a position can be stored (limits included)."""
    return LON_MIN <= lon <= LON_MAX and LAT_MIN <= lat <= LAT_MAX


def _cos(x: float) -> float:
    """C's cos: NaN for an infinite argument (Python's raises)."""
    return math.cos(x) if math.isfinite(x) else math.nan


def _asin(x: float) -> float:
    """C's asin: NaN outside [-1, 1] (rounding can put a haversine there)."""
    return math.asin(x) if -1.0 <= x <= 1.0 else math.nan


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else math.nan


# -- bit interleaving -----------------------------------------------------------------
def _spread(v: int) -> int:
    """The 32 bits of ``v`` moved to the even bit positions of 64."""
    v = (v | (v << 16)) & 0x0000FFFF0000FFFF
    v = (v | (v << 8)) & 0x00FF00FF00FF00FF
    v = (v | (v << 4)) & 0x0F0F0F0F0F0F0F0F
    v = (v | (v << 2)) & 0x3333333333333333
    return (v | (v << 1)) & _EVEN


def _gather(v: int) -> int:
    """The even bits of 64-bit ``v`` packed into 32 (inverse of :func:`_spread`)."""
    v &= _EVEN
    v = (v | (v >> 1)) & 0x3333333333333333
    v = (v | (v >> 2)) & 0x0F0F0F0F0F0F0F0F
    v = (v | (v >> 4)) & 0x00FF00FF00FF00FF
    v = (v | (v >> 8)) & 0x0000FFFF0000FFFF
    return (v | (v >> 16)) & _U32


def encode(lon: float, lat: float, step: int = STEP_MAX,
           lat_min: float = LAT_MIN, lat_max: float = LAT_MAX) -> int | None:
    """The cell bits of a position at ``step`` bits per coordinate, or None
    when the position is outside the storable limits or the given latitude
    range.  A coordinate exactly at its upper limit scales to 2**step, one
    bit more than the others: kept, as Redis keeps it (the score of latitude
    85.05112878 has bit 52 set)."""
    if not valid(lon, lat) or not lat_min <= lat <= lat_max:
        return None
    lat_cell = (lat - lat_min) / (lat_max - lat_min) * float(1 << step)
    lon_cell = (lon - LON_MIN) / (LON_MAX - LON_MIN) * float(1 << step)
    return _spread(int(lat_cell) & _U32) | (_spread(int(lon_cell) & _U32) << 1)


def decode(cell: Cell, lat_min: float = LAT_MIN, lat_max: float = LAT_MAX) -> Area:
    """The rectangle of a cell (cell numbers wrap at 32 bits, as unsigned
    32-bit arithmetic does)."""
    lat_cell = _gather(cell.bits)
    lon_cell = _gather(cell.bits >> 1)
    cells = float(1 << cell.step)
    lat_scale = lat_max - lat_min
    lon_scale = LON_MAX - LON_MIN
    return Area(
        LON_MIN + (lon_cell / cells) * lon_scale,
        LON_MIN + (((lon_cell + 1) & _U32) / cells) * lon_scale,
        lat_min + (lat_cell / cells) * lat_scale,
        lat_min + (((lat_cell + 1) & _U32) / cells) * lat_scale,
    )


def centre(area: Area) -> tuple[float, float]:
    """(longitude, latitude) of an area's middle, clamped to the limits."""
    lon = min(max((area.lon_min + area.lon_max) / 2, LON_MIN), LON_MAX)
    lat = min(max((area.lat_min + area.lat_max) / 2, LAT_MIN), LAT_MAX)
    return lon, lat


def score_bits(score: float) -> int:
    """A score as the unsigned 64-bit integer C's ``(uint64_t)score`` gives
    on x86-64: truncated; negative numbers wrap (-1 is 2**64 - 1); what
    does not fit in 64 bits (infinities) gives the "integer indefinite"
    pattern the conversion instruction leaves."""
    if score >= 9223372036854775808.0:
        high = score - 9223372036854775808.0
        whole = int(high) if high < 9223372036854775808.0 else -(1 << 63)
        return (whole & _U64) ^ (1 << 63)
    if score >= -9223372036854775808.0:  # NaN never reaches a score
        return int(score) & _U64
    return 1 << 63


def score_int(score: float) -> int:
    """A score as C's ``(long long)score`` on x86-64 (WITHHASH's integer)."""
    if -9223372036854775808.0 <= score < 9223372036854775808.0:
        return int(score)
    return -(1 << 63)


_CELLS = float(1 << STEP_MAX)
_LAT_SCALE = LAT_MAX - LAT_MIN
_LON_SCALE = LON_MAX - LON_MIN


def decode_score(score: float) -> tuple[float, float]:
    """The position a geo set member's score stands for (its cell's centre).
    Any score decodes: what GEOADD did not make lands somewhere, clamped.
    (``centre(decode(Cell(score_bits(score), STEP_MAX)))`` written out: the
    searches call it once per member scanned.)"""
    bits = int(score) if 0.0 <= score < 9223372036854775808.0 else score_bits(score)
    lat_cell = _gather(bits)
    lon_cell = _gather(bits >> 1)
    lon_min = LON_MIN + (lon_cell / _CELLS) * _LON_SCALE
    lon_max = LON_MIN + (((lon_cell + 1) & _U32) / _CELLS) * _LON_SCALE
    lat_min = LAT_MIN + (lat_cell / _CELLS) * _LAT_SCALE
    lat_max = LAT_MIN + (((lat_cell + 1) & _U32) / _CELLS) * _LAT_SCALE
    lon = (lon_min + lon_max) / 2
    lat = (lat_min + lat_max) / 2
    return min(max(lon, LON_MIN), LON_MAX), min(max(lat, LAT_MIN), LAT_MAX)


def geohash_text(score: float) -> bytes:
    """The 11-character standard geohash of a member's position: decoded,
    encoded again with the latitude range -90..90, 5 bits a character from
    the top; 52 bits fill 10 characters and a half, the 11th is always '0'."""
    lon, lat = decode_score(score)
    bits = encode(lon, lat, STEP_MAX, -90.0, 90.0) or 0
    out = bytearray(11)
    for i in range(10):
        out[i] = ALPHABET[(bits >> (47 - 5 * i)) & 31]
    out[10] = ALPHABET[0]
    return bytes(out)


def score_range(cell: Cell) -> tuple[int, int]:
    """The scores [low, high) of every 52-bit hash inside a cell."""
    shift = 52 - 2 * cell.step
    return cell.bits << shift, (cell.bits + 1) << shift


# -- neighbours -------------------------------------------------------------------------
def _move(cell: Cell, lon_dir: int, lat_dir: int) -> Cell:
    """The cell ``lon_dir`` columns east and ``lat_dir`` rows north, wrapping
    around the grid (64-bit arithmetic; bits above the cell's are dropped
    from the coordinate that moves)."""
    bits, step = cell
    shift = 64 - 2 * step
    if lon_dir:
        lon = bits & _ODD
        fill = _EVEN >> shift     # the latitude positions: carries cross them
        if lon_dir > 0:
            lon = (lon + fill + 1) & _U64
        else:
            lon = ((lon | fill) - (fill + 1)) & _U64
        bits = (lon & (_ODD >> shift)) | (bits & _EVEN)
    if lat_dir:
        lat = bits & _EVEN
        fill = _ODD >> shift
        if lat_dir > 0:
            lat = (lat + fill + 1) & _U64
        else:
            lat = ((lat | fill) - (fill + 1)) & _U64
        bits = (bits & _ODD) | (lat & (_EVEN >> shift))
    return Cell(bits, step)


# The eight neighbours in the order they are scanned: N, S, E, W, NE, NW, SE, SW.
_AROUND = ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1))


def neighbours(cell: Cell) -> list[Cell]:
    """The eight cells around ``cell``: N, S, E, W, NE, NW, SE, SW."""
    return [_move(cell, dx, dy) for dx, dy in _AROUND]


# -- searching ----------------------------------------------------------------------------
def estimate_step(radius_m: float, lat: float) -> int:
    """The precision whose cells are about as wide as the search: halve the
    world's half-width until it is below the radius, two steps coarser to be
    safe, coarser again past 66 and 80 degrees of latitude; 1..26."""
    if radius_m == 0:
        return STEP_MAX
    step = 1
    while radius_m < MERCATOR_MAX:
        radius_m *= 2
        step += 1
    step -= 2
    if lat > 66 or lat < -66:
        step -= 1
        if lat > 80 or lat < -80:
            step -= 1
    return min(max(step, 1), STEP_MAX)


class Shape(NamedTuple):
    """A search area around (``lon``, ``lat``): a circle of ``radius``, or
    (``radius`` None) a box ``width`` x ``height``, all in a unit of
    ``to_m`` metres."""

    lon: float
    lat: float
    to_m: float
    radius: float | None = None
    width: float = 0.0
    height: float = 0.0


def bounds(shape: Shape) -> tuple[float, float, float, float]:
    """(min lon, min lat, max lon, max lat) around the shape.  Meridians
    converge toward the poles, so the longitude span is taken at the edge
    nearer the pole (the north edge in the north, the south edge south of
    the equator)."""
    half_h = shape.to_m * (shape.radius if shape.radius is not None else shape.height / 2)
    half_w = shape.to_m * (shape.radius if shape.radius is not None else shape.width / 2)
    lat_delta = half_h / EARTH_RADIUS_M / DEG_RAD
    edge = shape.lat - lat_delta if shape.lat < 0 else shape.lat + lat_delta
    lon_delta = half_w / EARTH_RADIUS_M / _cos(edge * DEG_RAD) / DEG_RAD
    return (shape.lon - lon_delta, shape.lat - lat_delta,
            shape.lon + lon_delta, shape.lat + lat_delta)


def search_cells(shape: Shape) -> list[Cell | None]:
    """The nine cells to scan for ``shape``: its centre's cell then N, S, E,
    W, NE, NW, SE, SW, None for a neighbour the bounding box does not reach.

    The precision comes from the radius (a box: half its diagonal); one step
    coarser when a side neighbour does not reach the bounding box's edge."""
    min_lon, min_lat, max_lon, max_lat = bounds(shape)
    if shape.radius is not None:
        radius = shape.radius
    else:
        radius = _sqrt((shape.width / 2) * (shape.width / 2)
                       + (shape.height / 2) * (shape.height / 2))
    radius *= shape.to_m
    step = estimate_step(radius, shape.lat)
    cell = Cell(encode(shape.lon, shape.lat, step) or 0, step)
    around = neighbours(cell)
    north, south, east, west = (decode(c) for c in around[:4])
    if step > 1 and (north.lat_max < max_lat or south.lat_min > min_lat
                     or east.lon_max < max_lon or west.lon_min > min_lon):
        step -= 1
        cell = Cell(encode(shape.lon, shape.lat, step) or 0, step)
        around = neighbours(cell)
    cells: list[Cell | None] = [cell, *around]
    if step >= 2:
        area = decode(cell)
        if area.lat_min < min_lat:     # nothing needed south
            cells[2] = cells[7] = cells[8] = None
        if area.lat_max > max_lat:     # nor north
            cells[1] = cells[5] = cells[6] = None
        if area.lon_min < min_lon:     # nor west
            cells[4] = cells[6] = cells[8] = None
        if area.lon_max > max_lon:     # nor east
            cells[3] = cells[5] = cells[7] = None
    return cells


# -- distances --------------------------------------------------------------------------
def lat_distance(lat1: float, lat2: float) -> float:
    """Metres between two latitudes along a meridian."""
    return EARTH_RADIUS_M * abs(lat2 * DEG_RAD - lat1 * DEG_RAD)


def distance(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle metres between two positions (haversine); along a
    meridian when the longitudes' half difference has a sine of 0."""
    v = math.sin((lon2 * DEG_RAD - lon1 * DEG_RAD) / 2)
    if v == 0.0:
        return lat_distance(lat1, lat2)
    lat1r = lat1 * DEG_RAD
    lat2r = lat2 * DEG_RAD
    u = math.sin((lat2r - lat1r) / 2)
    a = u * u + math.cos(lat1r) * math.cos(lat2r) * v * v
    return 2.0 * EARTH_RADIUS_M * _asin(_sqrt(a))


def in_circle(shape: Shape, lon: float, lat: float) -> float | None:
    """The distance in metres from the shape's centre when (lon, lat) is
    within its radius, else None."""
    d = distance(shape.lon, shape.lat, lon, lat)
    return None if d > shape.radius * shape.to_m else d  # type: ignore[operator]


def in_box(shape: Shape, lon: float, lat: float) -> float | None:
    """The distance in metres from the box's centre when (lon, lat) is
    within half the height north-south of it and half the width east-west
    along its own parallel, else None."""
    if lat_distance(lat, shape.lat) > shape.height * shape.to_m / 2:
        return None
    if distance(lon, lat, shape.lon, lat) > shape.width * shape.to_m / 2:
        return None
    return distance(shape.lon, shape.lat, lon, lat)


def shape_filter(shape: Shape) -> Callable[[float, float], float | None]:
    """:func:`in_circle` or :func:`in_box` for one shape, with what depends
    on the shape alone worked out once (the same operations in the same
    order: the results are identical, bit for bit)."""
    lon1r = shape.lon * DEG_RAD
    lat1r = shape.lat * DEG_RAD
    cos1 = _cos(lat1r)
    diameter = 2.0 * EARTH_RADIUS_M
    sin, cos = math.sin, math.cos

    def centre_to(lon: float, lat: float) -> float:  # distance(shape.lon, shape.lat, lon, lat)
        v = sin((lon * DEG_RAD - lon1r) / 2)
        lat2r = lat * DEG_RAD
        if v == 0.0:
            return EARTH_RADIUS_M * abs(lat2r - lat1r)
        u = sin((lat2r - lat1r) / 2)
        a = u * u + cos1 * cos(lat2r) * v * v
        return diameter * _asin(_sqrt(a))

    if shape.radius is not None:
        limit = shape.radius * shape.to_m

        def circle(lon: float, lat: float) -> float | None:
            d = centre_to(lon, lat)
            return None if d > limit else d
        return circle

    half_h = shape.height * shape.to_m / 2
    half_w = shape.width * shape.to_m / 2
    lon_c = shape.lon

    def box(lon: float, lat: float) -> float | None:
        if EARTH_RADIUS_M * abs(lat1r - lat * DEG_RAD) > half_h:
            return None
        if distance(lon, lat, lon_c, lat) > half_w:
            return None
        return centre_to(lon, lat)
    return box


def format_distance(d: float) -> bytes:
    """A distance with exactly four decimals, rounded half to even from
    ``d * 10000`` (``-0.00001`` is ``0.0000``)."""
    if d == 0:
        return b"0.0000"
    scaled = d * 10000.0
    # C's llrint: what does not fit (NaN too) is the lowest long long.
    units = round(scaled) if -9.2e18 < scaled < 9.2e18 else -(1 << 63)
    text = b"%05d" % abs(units)
    return (b"-" if units < 0 else b"") + text[:-4] + b"." + text[-4:]


# -- ordering ---------------------------------------------------------------------------
def sort_nearest(items: list, dist: Callable[[Any], float], first: int,
                 descending: bool = False) -> None:
    """Order ``items`` in place by ``dist`` (farthest first when
    ``descending``) so that at least the first ``first`` are right, leaving
    equal distances in the order Redis leaves them.

    All of them wanted: a stable sort (what glibc's merge-sorting qsort
    does).  Fewer: Bentley and McIlroy's quicksort ("Engineering a Sort
    Function", 1993: median of three, or of three medians of three past 40
    items, a three-way partition that parks equal items at both ends and
    swaps them to the middle, insertion sort below 7 items), skipping the
    parts that hold none of the first ``first`` positions -- the partial
    sort Redis uses, whose tie order is not the stable one.  O(N log N)."""
    n = len(items)
    sign = -1 if descending else 1
    keys = [dist(item) for item in items]
    if first >= n:
        if all(k == k for k in keys):
            items.sort(key=dist, reverse=descending)
        else:  # NaN: the comparison is no order; merge exactly as glibc does
            order = _merge_sort(list(range(n)), keys, sign)
            items[:] = [items[i] for i in order]
        return

    def cmp(i: int, j: int) -> int:
        return sign * _compare(keys[i], keys[j])

    def swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]

    def med3(a: int, b: int, c: int) -> int:
        if cmp(a, b) < 0:
            return b if cmp(b, c) < 0 else (c if cmp(a, c) < 0 else a)
        return b if cmp(b, c) > 0 else (a if cmp(a, c) < 0 else c)

    last = first - 1

    def outside(start: int, size: int) -> bool:
        """Whether positions 0..last all lie outside [start, start + size)."""
        end = start + size
        return (0 < start and last < start) or (0 >= end and last >= end)

    def part(a: int, size: int) -> None:
        while True:
            if size < 7:
                for m in range(a + 1, a + size):
                    p = m
                    while p > a and cmp(p - 1, p) > 0:
                        swap(p, p - 1)
                        p -= 1
                return
            m = a + size // 2
            if size > 7:
                lo, hi = a, a + size - 1
                if size > 40:
                    d = size // 8
                    lo = med3(lo, lo + d, lo + 2 * d)
                    m = med3(m - d, m, m + d)
                    hi = med3(hi - 2 * d, hi - d, hi)
                m = med3(lo, m, hi)
            swap(a, m)
            pa = pb = a + 1
            pc = pd = a + size - 1
            while True:
                while pb <= pc:
                    c = cmp(pb, a)
                    if c > 0:
                        break
                    if c == 0:
                        swap(pa, pb)
                        pa += 1
                    pb += 1
                while pb <= pc:
                    c = cmp(pc, a)
                    if c < 0:
                        break
                    if c == 0:
                        swap(pc, pd)
                        pd -= 1
                    pc -= 1
                if pb > pc:
                    break
                swap(pb, pc)
                pb += 1
                pc -= 1
            end = a + size
            r = min(pa - a, pb - pa)
            for k in range(r):
                swap(a + k, pb - r + k)
            r = min(pd - pc, end - pd - 1)
            for k in range(r):
                swap(pb + k, end - r + k)
            r = pb - pa
            if r > 1 and not outside(a, r):
                part(a, r)
            r = pd - pc
            if r <= 1:
                return
            a, size = end - r, r
            if outside(a, size):
                return

    part(0, n)


def _compare(a: float, b: float) -> int:
    """Redis's distance comparison: 1 if greater, 0 if equal, else -1 (NaN: -1)."""
    if a > b:
        return 1
    return 0 if a == b else -1


def _merge_sort(order: list[int], keys: list[float], sign: int) -> list[int]:
    """Top-down merge sort, the left run taken while its head compares <= 0."""
    if len(order) <= 1:
        return order
    half = len(order) // 2
    left = _merge_sort(order[:half], keys, sign)
    right = _merge_sort(order[half:], keys, sign)
    out: list[int] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if sign * _compare(keys[left[i]], keys[right[j]]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]
