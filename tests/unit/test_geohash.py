"""The geohash arithmetic of the geo commands (tidelog.types.geohash), no sockets.

Known values are the ones redis-server 7.0.15 gives for the redis.io GEOADD
page's example (Palermo, Catania); the rest are properties: encode/decode
round trips, neighbours as cell arithmetic modulo the grid, the search cells
covering every point of the shape, distances, and the partial sort."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from tidelog.types import geohash as gh
from tidelog.types.geohash import Cell, Shape

lons = st.floats(min_value=-180, max_value=180, allow_nan=False)
lats = st.floats(min_value=gh.LAT_MIN, max_value=gh.LAT_MAX, allow_nan=False)
steps = st.integers(min_value=1, max_value=26)

PALERMO = 3479099956230698
CATANIA = 3479447370796909


def cell_numbers(cell: Cell) -> tuple[int, int]:
    """(longitude column, latitude row) of a cell."""
    return gh._gather(cell.bits >> 1), gh._gather(cell.bits)


def test_known_values():
    assert gh.encode(13.361389, 38.115556) == PALERMO
    assert gh.encode(15.087269, 37.502669) == CATANIA
    assert gh.decode_score(PALERMO) == (13.361389338970184, 38.1155563954963)
    assert gh.decode_score(CATANIA) == (15.087267458438873, 37.50266842333162)
    assert gh.geohash_text(PALERMO) == b"sqc8b49rny0"
    assert gh.geohash_text(CATANIA) == b"sqdtr74hyu0"
    lon1, lat1 = gh.decode_score(PALERMO)
    lon2, lat2 = gh.decode_score(CATANIA)
    assert gh.format_distance(gh.distance(lon1, lat1, lon2, lat2)) == b"166274.1516"
    assert gh.format_distance(gh.distance(lon1, lat1, lon2, lat2) / 1000) == b"166.2742"


def test_limits():
    assert gh.encode(180.0000001, 0) is None and gh.encode(0, 85.051129) is None
    assert gh.encode(-180, -85.05112878) == 0
    # the upper limits scale to 2**26: one bit above the 52 (Redis keeps it)
    assert gh.encode(0, gh.LAT_MAX) == gh._spread(1 << 26) | (gh._spread(1 << 25) << 1)
    assert gh.encode(180, gh.LAT_MAX) == (1 << 52) | (1 << 53)
    assert gh.decode_score(float((1 << 52) | (1 << 53))) == (180.0, gh.LAT_MAX)  # clamped
    assert gh.encode(0, 90, lat_min=-90, lat_max=90) is None  # beyond the storable limit


@given(st.one_of(st.integers(0, 2**54).map(float), st.floats(allow_nan=False)))
def test_decode_score_is_the_centre_of_the_cell(score):
    assert gh.decode_score(score) == gh.centre(gh.decode(Cell(gh.score_bits(score), 26)))


def test_scores_not_made_by_geoadd():
    """Scores as C's (uint64_t) conversion on x86-64 takes them."""
    assert gh.score_bits(-1.0) == 2**64 - 1
    assert gh.score_bits(0.5) == 0
    assert gh.score_bits(math.inf) == 0
    assert gh.score_bits(-math.inf) == 1 << 63
    assert gh.score_bits(2.0**63) == 1 << 63
    assert gh.score_bits(1e19) == 10**19
    assert gh.score_bits(2.0**64) == 0
    assert gh.score_int(1e300) == -(1 << 63) and gh.score_int(-2.5) == -2
    for score in (-1.0, math.inf, -math.inf, 1e300, 0.5):
        lon, lat = gh.decode_score(score)
        assert gh.valid(lon, lat)


@given(lons, lats)
@example(179.99999999999997, 2.0)  # rounds to cell 2**26 of the longitude
@example(180.0, 44.5)
def test_round_trip(lon, lat):
    bits = gh.encode(lon, lat)
    assert bits is not None and bits < 1 << 54
    dlon, dlat = gh.decode_score(float(bits))
    # A longitude at (or a hair below) 180 rounds to cell 2**26, as in Redis:
    # the result has 53 bits, and the double a geo set keeps loses the lowest,
    # a latitude bit, so the latitude may be one more cell off.
    cells = 1 if bits < 1 << 53 else 2
    assert abs(dlon - lon) <= 360 / 2**26
    assert abs(dlat - lat) <= cells * (gh.LAT_MAX - gh.LAT_MIN) / 2**26
    if lon < 180 and lat < gh.LAT_MAX:  # the centre is in the same cell
        # (compared as the scores a geo set keeps, for the reason above)
        assert float(gh.encode(dlon, dlat)) == float(bits)


@given(lons, lats, steps)
def test_coarser_cells_are_prefixes(lon, lat, step):
    assume(lon < 180 and lat < gh.LAT_MAX)
    fine = gh.encode(lon, lat, 26)
    coarse = gh.encode(lon, lat, step)
    # scaling by a power of two is exact: the coarse cell is the fine one's prefix
    assert fine >> (52 - 2 * step) == coarse


@given(lons, lats, steps)
def test_decode_contains_the_point(lon, lat, step):
    assume(lon < 180 and lat < gh.LAT_MAX)
    area = gh.decode(Cell(gh.encode(lon, lat, step), step))
    slack = 1e-9
    assert area.lon_min - slack <= lon <= area.lon_max + slack
    assert area.lat_min - slack <= lat <= area.lat_max + slack


@given(lons, lats, steps)
def test_neighbours_are_cell_arithmetic(lon, lat, step):
    assume(lon < 180 and lat < gh.LAT_MAX)
    cell = Cell(gh.encode(lon, lat, step), step)
    x, y = cell_numbers(cell)
    size = 1 << step
    assume(x < size and y < size)  # not a point that rounds up to the upper limit
    expected = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1)]
    for (dx, dy), n in zip(expected, gh.neighbours(cell), strict=True):
        assert n.step == step
        assert cell_numbers(n) == ((x + dx) % size, (y + dy) % size)
        assert n.bits < 1 << (2 * step)


def test_neighbours_wrap_around():
    cell = Cell(gh.encode(179.9999999, 0, 3), 3)
    east = gh.neighbours(cell)[2]
    assert cell_numbers(east)[0] == 0
    assert gh.decode(east).lon_min == -180


def test_estimate_step():
    assert gh.estimate_step(0, 0) == 26
    assert gh.estimate_step(1, 0) == 24      # 2**25 m is past the half-width: 26 - 2
    assert gh.estimate_step(1, 70) == 23 and gh.estimate_step(1, -81) == 22
    assert gh.estimate_step(5_000_000, 0) == 2 and gh.estimate_step(10_000_000, 0) == 1
    assert gh.estimate_step(math.inf, 0) == 1
    assert gh.estimate_step(1e-300, 0) == 26


@given(st.floats(min_value=-170, max_value=170), st.floats(min_value=-60, max_value=60),
       st.floats(min_value=1, max_value=200_000), st.booleans(), st.integers(0, 2**32))
def test_search_cells_cover_the_shape(lon, lat, size, box, seed):
    """Every point inside the shape has a score in one of the cells scanned."""
    shape = Shape(lon, lat, 1.0, None, size * 2, size) if box else Shape(lon, lat, 1.0, size)
    ranges = [gh.score_range(c) for c in gh.search_cells(shape) if c is not None]
    min_lon, min_lat, max_lon, max_lat = gh.bounds(shape)
    rng = random.Random(seed)
    inside = gh.in_box if box else gh.in_circle
    for _ in range(50):
        plon = rng.uniform(min_lon, max_lon)
        plat = rng.uniform(min_lat, max_lat)
        score = gh.encode(plon, plat)
        assume(score is not None)
        plon, plat = gh.decode_score(float(score))
        if inside(shape, plon, plat) is not None:
            assert any(low <= score < high for low, high in ranges), (plon, plat)


def test_search_cells_drop_unneeded_neighbours():
    cells = gh.search_cells(Shape(10.0, 10.0, 1.0, 1.0))  # a 1 m circle: a few cells
    assert cells[0] is not None and len(cells) == 9
    assert any(c is None for c in cells)
    everything = gh.search_cells(Shape(0.0, 0.0, 1.0, 4e7))
    assert all(c is not None and c.step == 1 for c in everything)


@given(lons, lats, lons, lats)
def test_distance(lon1, lat1, lon2, lat2):
    d = gh.distance(lon1, lat1, lon2, lat2)
    assert 0 <= d <= math.pi * gh.EARTH_RADIUS_M + 1e-6
    assert d == pytest.approx(gh.distance(lon2, lat2, lon1, lat1), rel=1e-9, abs=1e-6)
    assert gh.distance(lon1, lat1, lon1, lat1) == 0


def test_distance_along_a_meridian():
    one_degree = gh.EARTH_RADIUS_M * math.pi / 180
    assert gh.distance(5, 10, 5, 11) == pytest.approx(one_degree)
    assert gh.lat_distance(10, 11) == gh.distance(5, 10, 5, 11)


def test_shapes():
    circle = Shape(0.0, 0.0, 1000.0, 10.0)   # 10 km
    assert gh.in_circle(circle, 0.05, 0.05) is not None
    assert gh.in_circle(circle, 0.1, 0.0) is None
    box = Shape(0.0, 0.0, 1000.0, None, 20.0, 10.0)  # 20 km wide, 10 km high
    assert gh.in_box(box, 0.08, 0.0) is not None
    assert gh.in_box(box, 0.0, 0.08) is None
    assert gh.in_box(box, 0.1, 0.0) is None


@given(lons, lats, lons, lats, st.floats(0, 3e7), st.floats(0, 3e7), st.booleans(),
       st.sampled_from([1.0, 1000.0, 0.3048, 1609.34]))
def test_shape_filter_is_in_circle_or_in_box(clon, clat, lon, lat, w, h, box, to_m):
    shape = Shape(clon, clat, to_m, None, w, h) if box else Shape(clon, clat, to_m, w)
    reference = gh.in_box if box else gh.in_circle
    for plon in (lon, clon):
        got, want = gh.shape_filter(shape)(plon, lat), reference(shape, plon, lat)
        assert got == want or (got != got and want != want)  # NaN (asin past 1) alike


def test_format_distance():
    assert gh.format_distance(0.0) == b"0.0000"
    assert gh.format_distance(-0.0) == b"0.0000"
    assert gh.format_distance(-0.00001) == b"0.0000"
    assert gh.format_distance(-0.01) == b"-0.0100"
    assert gh.format_distance(0.00005) == b"0.0000"        # 0.5 units: to even
    assert gh.format_distance(0.00015) == b"0.0001"        # 1.4999999999999998 units
    assert gh.format_distance(0.00025) == b"0.0002"        # 2.5 units: to even
    assert gh.format_distance(1.23456) == b"1.2346"
    assert gh.format_distance(12345.6789) == b"12345.6789"
    assert gh.format_distance(math.nan) == b"-922337203685477.5808"


@given(st.lists(st.integers(0, 6), max_size=120), st.integers(1, 130), st.booleans())
def test_sort_nearest(keys, first, descending):
    items = list(enumerate(keys))
    ordered = list(items)
    gh.sort_nearest(ordered, lambda item: float(item[1]), first, descending)
    assert sorted(ordered) == items  # a permutation
    want = sorted(keys, reverse=descending)
    assert [k for _, k in ordered[:first]] == want[:first]
    if first >= len(items):  # all wanted: stable
        assert ordered == sorted(items, key=lambda item: item[1], reverse=descending)


def test_sort_nearest_with_nan_is_glibc_merge_order():
    items = [3.0, math.nan, 1.0, 2.0]
    gh.sort_nearest(items, float, 4)
    assert items[:2] == [1.0, 2.0] or math.isnan(items[1])
    assert sorted(x for x in items if x == x) == [1.0, 2.0, 3.0]


def test_geohash_text_alphabet():
    for score in (0.0, float(PALERMO), float((1 << 52) - 1)):
        text = gh.geohash_text(score)
        assert len(text) == 11 and text[-1:] == b"0"
        assert set(text) <= set(gh.ALPHABET)
