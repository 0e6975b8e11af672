"""Geo commands on an in-process engine (no sockets): what each propagates,
and searches against a brute-force model (every member tested against the
shape) -- the nine cells must find every member inside it."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.engine_harness import Harness
from tidelog.types import geohash as gh
from tidelog.types.geohash import Shape


def effects_of(h: Harness, *argv) -> list[list[bytes]]:
    h.take_effects()
    h(*argv)
    return h.take_effects()


def test_geoadd_propagates_as_zadd():
    h = Harness()
    assert effects_of(h, "GEOADD", "g", "ch", "13.361389", "38.115556", "Palermo") == [
        [b"zadd", b"g", b"ch", b"3479099956230698", b"Palermo"]]
    assert effects_of(h, "GEOADD", "g", "NX", "1", "1", "Palermo") == []   # nothing changed
    assert effects_of(h, "GEOADD", "g", "1", "1", "x", "500", "1", "y") == []  # refused
    assert effects_of(h, "GEOADD", "g", "XX", "1", "1", "nope") == []
    # the edge of the ranges: the score's digits as sent, the double rounded
    assert effects_of(h, "GEOADD", "g", "180", "0.000001", "e") == [
        [b"zadd", b"g", b"%d" % gh.encode(180, 0.000001), b"e"]]
    assert h("ZSCORE", "g", "e") == float(gh.encode(180, 0.000001))


def test_store_forms_propagate_themselves():
    h = Harness()
    h("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    search = ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"]
    assert effects_of(h, *search) == [[x.encode() for x in search]]
    empty = ["GEORADIUS", "g", "-50", "0", "1", "km", "STORE", "d"]
    assert effects_of(h, *empty) == [[x.encode() for x in empty]]          # deletes d
    assert effects_of(h, *empty) == []                                     # nothing to delete
    assert effects_of(h, "GEORADIUS", "g", "15", "37", "200", "km") == []
    assert h("EXISTS", "d") == 0


def test_replies():
    h = Harness()
    h("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
    assert h("GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "WITHDIST",
             "WITHHASH", "WITHCOORD", "ASC") == [
        [b"Catania", b"56.4413", 3479447370796909, [15.087267458438873, 37.50266842333162]],
        [b"Palermo", b"190.4424", 3479099956230698, [13.361389338970184, 38.1155563954963]]]
    assert h("GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "DESC") == [
        b"Catania", b"Palermo"]
    assert h.err("GEOSEARCH", "g", "BYRADIUS", "1", "km", "ASC", "WITHDIST") == (
        b"ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH")
    assert h.err("georadius", "g", "1", "1", "1", "km", "STORE", "x", "WITHDIST") == (
        b"ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD "
        b"options")
    assert h.err("GEOADD", "g", "1", "95", "x") == (
        b"ERR invalid longitude,latitude pair 1.000000,95.000000")


def _brute_force(points: dict[bytes, tuple[float, float]], shape: Shape) -> set[bytes]:
    inside = gh.in_circle if shape.radius is not None else gh.in_box
    return {m for m, (lon, lat) in points.items() if inside(shape, lon, lat) is not None}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.floats(-170, 170), st.floats(-70, 70),
       st.floats(0.1, 3000), st.booleans())
def test_search_finds_every_member_inside(seed, lon, lat, size_km, box):
    h = Harness()
    rng = random.Random(seed)
    argv = ["GEOADD", "g"]
    for i in range(200):
        spread = size_km / 50  # degrees, so that some points fall inside
        # (not 180 itself: a point there scales to column 2**26, past every
        # cell's scores, and searches miss it -- in Redis too)
        plon = max(-180.0, min(179.999999, lon + rng.uniform(-spread, spread)))
        plat = max(-85.0, min(85.0, lat + rng.uniform(-spread, spread)))
        argv += [repr(plon), repr(plat), f"m{i}"]
    h(*argv)
    flat = h("ZRANGE", "g", "0", "-1", "WITHSCORES")
    points = {m: gh.decode_score(float(score)) for m, score in zip(flat[::2], flat[1::2])}
    if box:
        shape = Shape(lon, lat, 1000.0, None, size_km, size_km / 2)
        cmd = ["BYBOX", repr(size_km), repr(size_km / 2), "km"]
    else:
        shape = Shape(lon, lat, 1000.0, size_km)
        cmd = ["BYRADIUS", repr(size_km), "km"]
    found = h("GEOSEARCH", "g", "FROMLONLAT", repr(lon), repr(lat), *cmd, "WITHDIST", "ASC")
    assert {m for m, _ in found} == _brute_force(points, shape)
    distances = [float(dist) for _, dist in found]
    assert distances == sorted(distances)
    stored = h("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", repr(lon), repr(lat), *cmd,
               "STOREDIST", "COUNT", "5")
    assert stored == min(5, len(found))
