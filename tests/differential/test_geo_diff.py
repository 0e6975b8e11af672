"""Geo commands against redis-server 7.0.15, raw reply bytes compared.

What cannot be compared byte for byte as it comes, and how it is compared:

* Coordinates (GEOPOS, WITHCOORD): Redis 7.2+ replies them with
  ``addReplyDouble``, the shortest text that reads back as the same double
  (https://redis.io/docs/latest/develop/reference/protocol-spec/#doubles);
  7.0.15 printed them with ``%.17Lf`` and dropped trailing zeros.  Our
  reply is checked to hold shortest forms, then rewritten into 7.0's form
  from the very doubles it holds, and that rewrite must equal 7.0's bytes.
* Scores (ZRANGE WITHSCORES after STOREDIST, ZSCORE): the same story for
  every double (see tests/differential/test_zsets_diff.py): members and
  order compared as bytes, scores as the doubles they spell.

Everything else -- members, their order (ties too), distances, hashes,
error texts, integers, nulls -- is compared as raw bytes, in RESP2 and RESP3.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

import pytest

from tests.differential.test_notify_diff import run, watch  # noqa: F401 (fixture)
from tests.support.differ_tools import assert_effects_match_aof, parse
from tidelog.resp.doubles import format_double
from tidelog.types.longdouble import format_human

pytestmark = pytest.mark.differential

# A two-element array of two numbers: a coordinate pair (members here are
# never numeric, so no other reply of these commands looks like one).
_PAIR = re.compile(rb"\*2\r\n(\$\d+\r\n|,)([-0-9.e+]+)\r\n(\$\d+\r\n|,)([-0-9.e+]+)\r\n")


def _as_redis_70(m: re.Match[bytes]) -> bytes:
    out = b"*2\r\n"
    for head, text in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
        value = float(text)
        assert format_double(value) == text, f"not the shortest form: {text!r}"
        human = format_human(Fraction(value))
        out += b",%s\r\n" % human if head == b"," else b"$%d\r\n%s\r\n" % (len(human), human)
    return out


def check(d, *argv) -> bytes:
    """``d.check`` for geo replies: coordinates compared as described above."""
    ours = d.ours.call(*argv)
    theirs = d.theirs.call(*argv)
    words = {str(a).upper() for a in argv}
    if "GEOPOS" in words or "WITHCOORD" in words:
        rewritten = _PAIR.sub(_as_redis_70, ours)
    else:
        rewritten = ours
    assert rewritten == theirs, f"\ncommand: {argv!r}\ntidelog: {ours!r}\nredis:   {theirs!r}"
    return ours


def _parse_doubles(reply: bytes):
    """``parse``, RESP3 doubles read as the text they carry."""
    return parse(re.sub(rb",([^\r]*)\r\n", lambda m: b"$%d\r\n%s\r\n" % (len(m[1]), m[1]), reply))


def check_scores(d, key: str) -> None:
    """ZRANGE key 0 -1 WITHSCORES: members and order as bytes, scores as doubles."""
    ours = d.ours.call("ZRANGE", key, "0", "-1", "WITHSCORES")
    theirs = d.theirs.call("ZRANGE", key, "0", "-1", "WITHSCORES")
    a, b = _parse_doubles(ours), _parse_doubles(theirs)
    if isinstance(a, list) and a and isinstance(a[0], list):  # RESP3 pairs
        a = [x for pair in a for x in pair]
        b = [x for pair in b for x in pair]
    assert a[0::2] == b[0::2], (ours, theirs)
    assert [float(x) for x in a[1::2]] == [float(x) for x in b[1::2]], (ours, theirs)
    for text in a[1::2]:
        assert format_double(float(text)) == text


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(differ, request):
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "zset-max-listpack-entries", "128") == b"+OK\r\n"
        assert client.call("CONFIG", "SET", "zset-max-listpack-value", "64") == b"+OK\r\n"
    if request.param == 3:
        differ.resp3()
    return differ


SICILY = ["GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669",
          "Catania", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2"]


@pytest.fixture
def sicily(d):
    check(d, *SICILY)
    return d


# -- GEOADD -------------------------------------------------------------------------------
def test_geoadd_forms(d):
    for argv in (
        ["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
        ["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
        ["GEOADD", "g", "NX", "1", "1", "Palermo", "2", "2", "a"],
        ["GEOADD", "g", "XX", "1", "1", "Palermo", "3", "3", "b"],
        ["GEOADD", "g", "XX", "CH", "5", "5", "Palermo", "3", "3", "b"],
        ["GEOADD", "g", "CH", "5", "5", "Palermo", "6", "6", "a", "7", "7", "c"],
        ["GEOADD", "g", "ch", "nx", "8", "8", "c", "9", "9", "d"],
        ["GEOADD", "g", "CH", "CH", "XX", "9", "9", "d"],
        ["GEOADD", "g", "NX", "XX", "1", "1", "x"],
        ["GEOADD", "g", "GT", "1", "1", "x"],
        ["GEOADD", "g", "1", "1", "x", "2"],
        ["GEOADD", "g", "1", "1"],
        ["GEOADD", "g", "CH", "NX", "XX"],
        ["GEOADD", "g", "CH", "CH", "CH"],
        ["GEOADD", "g", "abc", "1", "x"],
        ["GEOADD", "g", "1", "", "x"],
        ["GEOADD", "g", "1", " 1", "x"],
        ["GEOADD", "g", "nan", "1", "x"],
        ["GEOADD", "g", "inf", "1", "x"],
        ["GEOADD", "g", "1", "-inf", "x"],
        ["GEOADD", "g", "1e400", "1", "x"],
        ["GEOADD", "g", "180.0000001", "1", "x"],
        ["GEOADD", "g", "-180.0000001", "1", "x"],
        ["GEOADD", "g", "0", "85.05112879", "x"],
        ["GEOADD", "g", "0", "-85.05112879", "x"],
        ["GEOADD", "g", "1", "1", "ok", "200", "1", "bad"],   # nothing added
        ["GEOADD", "g", "0x10", "1", "hex"],
        ["GEOADD", "g", "1e1", "-1.5e1", "exp"],
        ["ZRANGE", "g", "0", "-1"],
        ["ZSCORE", "g", "b"],
        ["GEOADD", "g", "XX", "1", "1", "nothere"],
        ["GEOADD", "newkey", "XX", "1", "1", "m"],
        ["EXISTS", "newkey"],
        ["GEOADD", "g", "1", "1", "dup", "2", "2", "dup"],
    ):
        check(d, *argv)
    check(d, "GEOPOS", "g", "dup", "hex", "exp")


def test_geoadd_limits_and_poles(d):
    points = [("180", "85.05112878"), ("-180", "-85.05112878"), ("180", "-85.05112878"),
              ("-180", "85.05112878"), ("0", "0"), ("179.99999999", "0"), ("-179.99999999", "0"),
              ("0", "85.05"), ("0", "-85.05"), ("90", "45"), ("-0", "-0"),
              ("1e-300", "-1e-300"), ("0.00000001", "0.00000001")]
    for i, (lon, lat) in enumerate(points):
        check(d, "GEOADD", "p", lon, lat, f"p{i}")
    names = [f"p{i}" for i in range(len(points))]
    check(d, "GEOPOS", "p", *names)
    check(d, "GEOHASH", "p", *names)
    check(d, "ZRANGE", "p", "0", "-1")
    for i in range(len(points)):
        check(d, "ZSCORE", "p", f"p{i}")  # integers up to 2**53 + 2**52: spelled alike
    for unit in ("m", "km"):
        check(d, "GEODIST", "p", "p0", "p1", unit)
        check(d, "GEODIST", "p", "p5", "p6", unit)   # across the antimeridian
        check(d, "GEODIST", "p", "p7", "p8", unit)
        check(d, "GEODIST", "p", "p0", "p3", unit)


def test_geoadd_wrongtype(d):
    check(d, "SET", "s", "x")
    check(d, "GEOADD", "s", "1", "1", "m")
    check(d, "GEOADD", "s", "1", "1000", "m")          # the position is checked first
    for argv in (["GEODIST", "s", "a", "b"], ["GEODIST", "s", "a", "b", "parsec"],
                 ["GEOHASH", "s", "a"], ["GEOPOS", "s", "a"],
                 ["GEOSEARCH", "s", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
                 ["GEOSEARCH", "s", "bad"],
                 ["GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
                 ["GEORADIUS", "s", "1", "1", "1", "km"],
                 ["GEORADIUS", "s", "1000", "1", "1", "km"],
                 ["GEORADIUSBYMEMBER", "s", "a", "1", "km"],
                 ["GEORADIUS_RO", "s", "1", "1", "1", "km"],
                 ["GEORADIUSBYMEMBER_RO", "s", "a", "1", "km"]):
        check(d, *argv)


# -- GEODIST, GEOHASH, GEOPOS --------------------------------------------------------------
def test_geodist(sicily):
    d = sicily
    for argv in (
        ["GEODIST", "Sicily", "Palermo", "Catania"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "m"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "KM"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "ft"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "Mi"],
        ["GEODIST", "Sicily", "Palermo", "Palermo", "km"],
        ["GEODIST", "Sicily", "Palermo", "edge1"],
        ["GEODIST", "Sicily", "edge1", "edge2", "mi"],
        ["GEODIST", "Sicily", "Palermo", "nope"],
        ["GEODIST", "Sicily", "nope", "Palermo", "km"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "parsec"],
        ["GEODIST", "Sicily", "Palermo", "Catania", "km", "extra"],
        ["GEODIST", "nokey", "a", "b"],
        ["GEODIST", "nokey", "a", "b", "parsec"],
        ["GEODIST", "nokey", "a", "b", "km", "x"],
        ["GEODIST", "Sicily", "Palermo"],
    ):
        check(d, *argv)


def test_geohash_geopos(sicily):
    d = sicily
    for argv in (
        ["GEOHASH", "Sicily", "Palermo", "Catania", "nope", "edge1", "edge2"],
        ["GEOHASH", "Sicily"],
        ["GEOHASH", "nokey", "a", "b"],
        ["GEOHASH", "nokey"],
        ["GEOPOS", "Sicily", "Palermo", "Catania", "nope", "edge1", "edge2"],
        ["GEOPOS", "Sicily"],
        ["GEOPOS", "nokey", "a", "b"],
        ["GEOPOS", "nokey"],
    ):
        check(d, *argv)


def test_members_not_made_by_geoadd(d):
    """Any score decodes somewhere: negative, fractional, huge, infinite."""
    check(d, "ZADD", "w", "-1", "a", "inf", "b", "-inf", "c", "1e19", "d", "2e19", "e",
          "1e300", "f", "0.5", "g", "9007199254740993", "h", "18446744073709551616", "i",
          "-9.3e18", "j", "4503599627370495.5", "k", "0", "l")
    names = "abcdefghijkl"
    check(d, "GEOPOS", "w", *names)
    check(d, "GEOHASH", "w", *names)
    check(d, "GEODIST", "w", "a", "b", "km")
    check(d, "GEOSEARCH", "w", "FROMLONLAT", "0", "0", "BYRADIUS", "50000", "km", "WITHHASH",
          "WITHCOORD", "WITHDIST")
    check(d, "GEOSEARCH", "w", "FROMMEMBER", "k", "BYRADIUS", "50000", "km", "WITHHASH",
          "ASC")
    check(d, "GEORADIUS", "w", "-180", "-85.05112878", "1", "km", "WITHHASH", "WITHCOORD")


# -- searches -------------------------------------------------------------------------------------
def test_geosearch_options(sicily):
    d = sicily
    base = ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37"]
    for shape in (["BYRADIUS", "200", "km"], ["BYRADIUS", "200000", "M"],
                  ["BYRADIUS", "124.27", "mi"], ["BYRADIUS", "656168", "FT"],
                  ["BYBOX", "400", "400", "km"], ["BYBOX", "200", "600", "km"],
                  ["BYRADIUS", "0", "km"], ["BYBOX", "0", "0", "m"],
                  ["BYRADIUS", "1000", "km"], ["BYBOX", "10000", "20000", "km"]):
        for opts in ([], ["ASC"], ["DESC"], ["WITHDIST"], ["WITHHASH"], ["WITHCOORD"],
                     ["WITHCOORD", "WITHDIST", "WITHHASH"], ["COUNT", "1"], ["COUNT", "2"],
                     ["COUNT", "3", "DESC"], ["COUNT", "1", "ANY"], ["COUNT", "2", "ANY", "DESC"],
                     ["ANY", "COUNT", "9", "WITHDIST"], ["count", "2", "withdist", "desc"],
                     ["ASC", "DESC"], ["COUNT", "1", "COUNT", "4"]):
            check(d, *base, *shape, *opts)
    check(d, "GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "ASC",
          "WITHDIST")
    check(d, "GEOSEARCH", "Sicily", "FROMMEMBER", "edge2", "BYBOX", "400", "400", "km",
          "DESC", "WITHCOORD")
    check(d, "GEOSEARCH", "Sicily", "BYRADIUS", "200", "km", "FROMLONLAT", "15", "37")
    check(d, "GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMMEMBER", "Catania",
          "BYRADIUS", "100", "km", "WITHDIST")
    check(d, "GEOSEARCH", "Sicily", "FROMLONLAT", "1", "1", "FROMLONLAT", "15", "37",
          "BYRADIUS", "1", "km", "BYRADIUS", "200", "km")


def test_geosearch_errors(sicily):
    d = sicily
    for argv in (
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "parsec"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "x", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "nan", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "inf", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "x", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "y", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "-1", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "-1", "parsec"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "parsec"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1",
         "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "km", "BYRADIUS",
         "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS",
         "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS",
         "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "parsec"],
        ["GEOSEARCH", "Sicily", "BYRADIUS", "1", "parsec", "FROMMEMBER", "nope"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "200", "37", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "x", "37", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "0"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "-1"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "x"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "ANY"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE", "x"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STOREDIST"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "bogus"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "WITHDIST",
         "COUNT", "0"],
        ["GEOSEARCH", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"],
        ["geosearch", "Sicily", "BYRADIUS", "1", "km", "ASC", "WITHDIST"],
        ["GeoSearch", "Sicily", "FROMMEMBER", "Palermo", "ASC", "WITHDIST"],
        ["GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "ASC", "WITHDIST", "ANY"],
        ["GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "1"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYRADIUS", "-1", "km"],
        ["GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYBOX", "1", "1", "km", "ANY"],
        ["GEOSEARCH", "nokey", "BYBOX", "1", "1", "km"],
        ["GEOSEARCH", "nokey", "FROMLONLAT", "500", "1", "BYBOX", "1", "1", "km"],
    ):
        check(d, *argv)


def test_geosearchstore(sicily):
    d = sicily
    base = ["FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"]
    for opts in ([], ["ASC"], ["DESC", "COUNT", "1"], ["STOREDIST"], ["STOREDIST", "DESC"],
                 ["COUNT", "2", "ANY", "STOREDIST"], ["storedist", "count", "3"]):
        check(d, "GEOSEARCHSTORE", "dst", "Sicily", *base, *opts)
        check_scores(d, "dst")
        check(d, "TYPE", "dst")
        check(d, "OBJECT", "ENCODING", "dst")
    for argv in (
        ["GEOSEARCHSTORE", "dst", "Sicily", *base, "WITHDIST"],
        ["GEOSEARCHSTORE", "dst", "Sicily", *base, "WITHCOORD", "STOREDIST"],
        ["GEOSEARCHSTORE", "dst", "Sicily", *base, "STORE", "x"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "BYRADIUS", "1", "km"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "15", "37", "ASC"],
        ["GEOSEARCHSTORE", "dst", "Sicily", *base, "ANY"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"],
        ["EXISTS", "dst"],
        # an empty result deletes the destination
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "-100", "0", "BYRADIUS", "1", "km"],
        ["EXISTS", "dst"],
        ["GEOSEARCHSTORE", "dst", "Sicily", "FROMLONLAT", "-100", "0", "BYRADIUS", "1", "km"],
        ["SET", "dst", "string"],
        ["GEOSEARCHSTORE", "dst", "nokey", *base],
        ["EXISTS", "dst"],
        ["GEOSEARCHSTORE", "dst", "nokey", *base],
        ["SET", "dst", "string"],
        ["EXPIRE", "dst", "1000"],
        ["GEOSEARCHSTORE", "dst", "Sicily", *base],
        ["TTL", "dst"],
        ["GEOSEARCHSTORE", "Sicily", "Sicily", *base, "STOREDIST"],
    ):
        check(d, *argv)
    check_scores(d, "Sicily")


def test_georadius_family(sicily):
    d = sicily
    for name, centre in (("GEORADIUS", ["15", "37"]), ("GEORADIUS_RO", ["15", "37"]),
                         ("GEORADIUSBYMEMBER", ["Palermo"]),
                         ("GEORADIUSBYMEMBER_RO", ["Palermo"])):
        for radius in (["200", "km"], ["100", "MI"], ["0", "m"], ["1000000", "ft"]):
            for opts in ([], ["WITHDIST"], ["WITHCOORD", "WITHHASH"], ["ASC"], ["DESC"],
                         ["COUNT", "2"], ["COUNT", "1", "ANY"], ["WITHDIST", "DESC", "COUNT", "3"],
                         ["COUNT", "0"], ["ANY"], ["STORE", "x"], ["STOREDIST", "x"], ["bogus"],
                         ["COUNT"], ["STORE"], ["FROMMEMBER", "Palermo"],
                         ["BYRADIUS", "1", "km"]):
                check(d, name, "Sicily", *centre, *radius, *opts)
        for argv in ([name, "Sicily", *centre, "x", "km"], [name, "Sicily", *centre, "-1", "km"],
                     [name, "Sicily", *centre, "1", "parsec"],
                     [name, "nokey", *centre, "x", "km"],
                     [name, "nokey", *centre, "1", "km", "ANY"],
                     [name, "nokey", *centre, "1", "km", "STORE", "d"]):
            check(d, *argv)
    for argv in (["GEORADIUS", "Sicily", "200", "37", "1", "km"],
                 ["GEORADIUS", "Sicily", "x", "37", "1", "km"],
                 ["GEORADIUSBYMEMBER", "Sicily", "nope", "1", "km"],
                 ["GEORADIUSBYMEMBER", "Sicily", "nope", "x", "km"],
                 ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "s1", "WITHDIST"],
                 ["GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD", "STORE", "s1"]):
        check(d, *argv)
    for argv in (["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "s1"],
                 ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STOREDIST", "s2", "DESC"],
                 ["GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "s3", "STOREDIST",
                  "s4", "COUNT", "2"],
                 ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "STORE", "s5"],
                 ["GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "mi", "STOREDIST", "s6",
                  "COUNT", "1"]):
        check(d, *argv)
    for key in ("s1", "s2", "s3", "s4", "s5", "s6"):
        check(d, "EXISTS", key)
        check_scores(d, key)
    check(d, "GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "s1")
    check(d, "EXISTS", "s1")


def test_search_edges(d):
    """Poles, the antimeridian, the limits, radius 0, searches wider than the world."""
    rng = random.Random(7)
    pts = []
    for i in range(120):
        lon = rng.choice([180, -180, 179.9999, -179.9999, 0]) + rng.uniform(-0.5, 0.5)
        lon = max(-180.0, min(180.0, lon))
        lat = rng.choice([85.05112878, -85.05112878, 0, 60, -60]) + rng.uniform(-2, 2)
        lat = max(-85.05112878, min(85.05112878, lat))
        pts += [repr(lon), repr(lat), f"e{i}"]
    check(d, "GEOADD", "e", *pts)
    check(d, "GEOADD", "e", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw",
          "180", "0", "east", "-180", "0", "west")
    centres = [("180", "85.05112878"), ("-180", "-85.05112878"), ("180", "0"), ("-180", "0"),
               ("0", "85.05112878"), ("179.99", "84"), ("-179.99", "-84"), ("0", "0"),
               ("90", "70"), ("-90", "-81")]
    for lon, lat in centres:
        for radius in ("0", "1", "500", "50000", "300000", "5000000", "20037726.37", "4e7"):
            check(d, "GEOSEARCH", "e", "FROMLONLAT", lon, lat, "BYRADIUS", radius, "m",
                  "WITHDIST", "WITHHASH")
            check(d, "GEOSEARCH", "e", "FROMLONLAT", lon, lat, "BYBOX", radius, radius, "m",
                  "ASC", "WITHCOORD")
            check(d, "GEOSEARCH", "e", "FROMLONLAT", lon, lat, "BYBOX", radius, "1000", "m",
                  "DESC", "COUNT", "5")
    for member in ("ne", "sw", "east", "west", "e0", "e1"):
        check(d, "GEORADIUSBYMEMBER", "e", member, "300", "km", "WITHDIST", "ASC")
        check(d, "GEOSEARCH", "e", "FROMMEMBER", member, "BYBOX", "700", "300", "km", "WITHDIST")
    check(d, "GEOHASH", "e", "ne", "sw", "east", "west", *[f"e{i}" for i in range(20)])
    check(d, "GEOPOS", "e", "ne", "sw", "east", "west", *[f"e{i}" for i in range(20)])


def test_points_on_the_upper_limits(d):
    """Longitude 180 and latitude 85.05112878 scale to cell 2**26, one bit past
    the 52: searches from elsewhere miss such a point, a search centred on it
    finds it (Redis's arithmetic, kept)."""
    check(d, "GEOADD", "lim", "180", "0", "a", "179.99", "0", "b", "-180", "0", "c",
          "10", "85.05112878", "n", "10", "85.05", "n2")
    for lon, lat in (("179.9", "0"), ("180", "0"), ("-179.9", "0"), ("10", "85.0"),
                     ("10", "85.05112878")):
        check(d, "GEOSEARCH", "lim", "FROMLONLAT", lon, lat, "BYRADIUS", "100", "km", "ASC")
        check(d, "GEOSEARCH", "lim", "FROMLONLAT", lon, lat, "BYBOX", "300", "300", "km")
    check(d, "GEOSEARCH", "lim", "FROMMEMBER", "a", "BYRADIUS", "100", "km", "WITHDIST")
    check(d, "GEOSEARCH", "lim", "FROMMEMBER", "n", "BYRADIUS", "100", "km", "WITHDIST")


def test_extreme_sizes(d):
    """Infinite and huge boxes and radii (C's cos and asin give NaN, not errors), the
    smallest ones, and radii around the step estimate's thresholds."""
    check(d, "GEOADD", "e", "1", "1", "a", "179", "85", "b", "-179", "-85", "c", "0", "0", "d",
          "90", "-30", "e", "-180", "85.05112878", "f")
    for box in (["inf", "inf"], ["inf", "1"], ["1", "inf"], ["1e308", "1e308"], ["1e-320", "5"],
                ["0", "1e300"], ["4e7", "1"], ["1", "4e7"]):
        for lon, lat in (("0", "0"), ("179", "85"), ("-180", "-85.05112878")):
            check(d, "GEOSEARCH", "e", "FROMLONLAT", lon, lat, "BYBOX", *box, "km", "WITHDIST",
                  "ASC")
            check(d, "GEOSEARCH", "e", "FROMLONLAT", lon, lat, "BYBOX", *box, "mi", "WITHDIST",
                  "DESC", "COUNT", "2")
    for radius in ("inf", "1e308", "1e-320", "4.9e-324", "20037726.37", "10018863.185",
                   "10018863.184", "5009431.5925", "2504715.79625", "1e6", "1"):
        for lon, lat in (("0", "85.05112878"), ("-180", "-85.05112878"), ("45", "-66.5"),
                         ("45", "80.5")):
            check(d, "GEOSEARCH", "e", "FROMLONLAT", lon, lat, "BYRADIUS", radius, "m",
                  "WITHDIST", "ASC")
            check(d, "GEORADIUS", "e", lon, lat, radius, "m", "WITHDIST", "WITHHASH")


def test_ties_in_distance(d):
    """Many members at one place: the order of equal distances, whole sorts
    (stable) and partial ones (COUNT)."""
    argv = ["GEOADD", "t"]
    for i in range(90):
        spot = (i * 7) % 5
        argv += [repr(10 + spot * 0.001), repr(20 + spot * 0.001), f"t{i:02d}"]
    check(d, *argv)
    for count in ("1", "3", "7", "8", "40", "41", "60", "89", "90", "200"):
        for order in ("ASC", "DESC"):
            check(d, "GEOSEARCH", "t", "FROMLONLAT", "10.002", "20.002", "BYRADIUS", "100", "km",
                  order, "COUNT", count, "WITHDIST")
            check(d, "GEORADIUSBYMEMBER", "t", "t00", "100", "km", order, "COUNT", count)
    check(d, "GEOSEARCH", "t", "FROMMEMBER", "t03", "BYRADIUS", "100", "km", "ASC")
    check(d, "GEOSEARCH", "t", "FROMMEMBER", "t03", "BYRADIUS", "100", "km", "DESC")


def test_encodings_of_search_source(d):
    """A listpack and a skiplist sorted set answer alike."""
    check(d, "CONFIG", "SET", "zset-max-listpack-entries", "4")
    argv = ["GEOADD", "big"]
    for i in range(30):
        argv += [repr(2 + i * 0.01), repr(48 + i * 0.005), f"m{i}"]
    check(d, *argv)
    check(d, "OBJECT", "ENCODING", "big")
    check(d, "GEOSEARCHSTORE", "small", "big", "FROMMEMBER", "m0", "BYRADIUS", "1", "km")
    check(d, "OBJECT", "ENCODING", "small")
    check(d, "GEOSEARCH", "big", "FROMMEMBER", "m3", "BYRADIUS", "10", "km", "WITHDIST", "ASC")
    check(d, "GEORADIUS", "big", "2.1", "48.05", "5", "km", "STOREDIST", "sd")
    check(d, "OBJECT", "ENCODING", "sd")


# -- the random run --------------------------------------------------------------------------------
def _random_commands(seed: int, n: int) -> list[list[str]]:
    rng = random.Random(seed)

    def lon() -> str:
        r = rng.random()
        if r < 0.05:
            return rng.choice(["180", "-180", "0", "179.9999999", "-179.9999999"])
        if r < 0.15:
            return rng.choice(["1.5", "2.5", "1.5000001"])  # shared spots: ties
        return repr(rng.uniform(-180, 180))

    def lat() -> str:
        r = rng.random()
        if r < 0.05:
            return rng.choice(["85.05112878", "-85.05112878", "0", "85.05", "-85.05"])
        if r < 0.15:
            return rng.choice(["1.5", "2.5", "1.5000001"])
        if r < 0.35:
            return repr(rng.uniform(60, 85.05112878) * rng.choice([1, -1]))
        return repr(rng.uniform(-85.05112878, 85.05112878))

    def unit() -> str:
        return rng.choice(["m", "km", "ft", "mi", "KM", "Mi"])

    def dist() -> str:
        return repr(rng.choice([rng.uniform(0, 100), rng.uniform(0, 500000),
                                rng.uniform(0, 2e7), 0.0, float(rng.randrange(1000))]))

    def member() -> str:
        return "m%d" % rng.randrange(250)

    def centre(search: bool) -> list[str]:
        if rng.random() < 0.4:
            return ["FROMMEMBER", member()]
        return ["FROMLONLAT", lon(), lat()]

    def shape() -> list[str]:
        if rng.random() < 0.5:
            return ["BYRADIUS", dist(), unit()]
        return ["BYBOX", dist(), dist(), unit()]

    def options(store: bool) -> list[str]:
        out: list[str] = []
        if not store:
            for word in ("WITHDIST", "WITHHASH", "WITHCOORD"):
                if rng.random() < 0.3:
                    out.append(word)
        if rng.random() < 0.5:
            out.append(rng.choice(["ASC", "DESC"]))
        if rng.random() < 0.35:
            out += ["COUNT", str(rng.randrange(1, 25))]
            if rng.random() < 0.3:
                out.append("ANY")
        if rng.random() < 0.02:
            out.append(rng.choice(["ANY", "COUNT", "BOGUS", "WITHDIST"]))  # errors
        return out

    key = "g"
    commands: list[list[str]] = []
    for _ in range(n):
        k = rng.random()
        if k < 0.28:
            argv = ["GEOADD", key]
            if rng.random() < 0.2:
                argv.append(rng.choice(["NX", "XX", "CH", "NX", "CH"]))
            for _ in range(rng.randrange(1, 6)):
                argv += [lon(), lat(), member()]
        elif k < 0.43:
            argv = ["GEOSEARCH", key, *centre(True), *shape(), *options(False)]
        elif k < 0.51:
            argv = ["GEORADIUS" if rng.random() < 0.5 else "GEORADIUS_RO", key, lon(), lat(),
                    dist(), unit(), *options(False)]
        elif k < 0.57:
            argv = ["GEORADIUSBYMEMBER" if rng.random() < 0.5 else "GEORADIUSBYMEMBER_RO", key,
                    member(), dist(), unit(), *options(False)]
        elif k < 0.64:
            argv = ["GEODIST", key, member(), member()] + ([unit()] if rng.random() < 0.7 else [])
        elif k < 0.69:
            argv = ["GEOHASH", key] + [member() for _ in range(rng.randrange(0, 4))]
        elif k < 0.74:
            argv = ["GEOPOS", key] + [member() for _ in range(rng.randrange(0, 4))]
        elif k < 0.83:
            argv = ["GEOSEARCHSTORE", "dst", key, *centre(True), *shape(), *options(True)]
            if rng.random() < 0.5:
                argv.append("STOREDIST")
        elif k < 0.88:
            argv = ["GEORADIUS", key, lon(), lat(), dist(), unit(), *options(True),
                    rng.choice(["STORE", "STOREDIST"]), "dst"]
        elif k < 0.97:
            argv = ["ZRANGE", "dst", "0", "-1", "WITHSCORES"]
        else:
            argv = ["ZREM", key, member(), member()]
        commands.append(argv)
    return commands


@pytest.mark.parametrize("seed", [1, 2])
def test_random_run(differ, seed):
    """At least 5,000 random geo commands per run on one geo set (250
    members), every reply compared; RESP2 for seed 1, RESP3 for seed 2."""
    if seed == 2:
        differ.resp3()
    commands = _random_commands(seed, 5000)
    found = 0
    for argv in commands:
        if argv[0] == "ZRANGE":
            check_scores(differ, argv[1])
        else:
            reply = check(differ, *argv)
            found += argv[0].startswith("GEO") and reply[:1] == b"*" and reply[:2] != b"*0"
    check_scores(differ, "g")
    assert found > 1000  # the run is not all errors and empty answers


# -- propagation, events, COMMAND INFO -------------------------------------------------------------
EFFECT_SCRIPT = [
    ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
    ["GEOADD", "g", "ch", "XX", "13.3", "38.1", "Palermo", "1", "1", "new"],
    ["GEOADD", "g", "NX", "13.3", "38.1", "Palermo"],                  # nothing: nothing
    ["GEOADD", "g", "180", "85.05112878", "corner", "-180", "-85.05112878", "other"],
    ["GEOADD", "g", "1", "1", "x", "500", "1", "bad"],
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"],
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "-50", "0", "BYRADIUS", "1", "km"],   # deletes
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "-50", "0", "BYRADIUS", "1", "km"],   # nothing
    ["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d2"],
    ["GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "d2", "COUNT", "1"],
    ["GEORADIUSBYMEMBER", "g", "Palermo", "1", "km", "STORE", "d2"],
    ["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "d2"],
    ["GEORADIUS", "g", "15", "37", "200", "km"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"],
    ["GEODIST", "g", "Palermo", "Catania"], ["GEOPOS", "g", "x"], ["GEOHASH", "g", "x"],
    ["EVAL", "return redis.call('GEOADD', KEYS[1], 'CH', 2, 2, 'lua')", "1", "g"],
    ["EVAL", "return redis.call('GEOSEARCHSTORE', KEYS[1], KEYS[2], 'FROMMEMBER', 'lua', "
             "'BYRADIUS', 1, 'km')", "2", "d3", "g"],
    ["MULTI"], ["GEOADD", "g", "3", "3", "multi"], ["GEOADD", "g", "NX", "3", "3", "multi"],
    ["GEORADIUS", "g", "3", "3", "1", "km", "STOREDIST", "d4"], ["EXEC"],
]


def test_effects_match_redis_aof(tidelog, aof_oracle):
    """GEOADD goes out as ZADD with integer scores (what 7.0.15 writes to its
    AOF); the STORE forms as themselves, when they changed something."""
    assert_effects_match_aof(tidelog, aof_oracle, EFFECT_SCRIPT)


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_keyspace_events(differ, watch, resp3):  # noqa: F811 (the imported fixture)
    watcher = watch("KEA", resp3)
    messages = run(differ, watcher, EFFECT_SCRIPT + [
        ["GEOSEARCH", "nokey", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
        ["GEOPOS", "nokey", "a"], ["GEODIST", "nokey", "a", "b"],
    ])
    assert messages


def test_keymiss_events(differ, watch):  # noqa: F811 (the imported fixture)
    """The source of a search is read (a miss is a keymiss); GEOADD's key is written."""
    watcher = watch("Kmz")
    run(differ, watcher, [
        ["GEOSEARCH", "nokey", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
        ["GEOSEARCHSTORE", "d", "nokey", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
        ["GEORADIUSBYMEMBER", "nokey", "m", "1", "km"], ["GEOPOS", "nokey", "a"],
        ["GEOHASH", "nokey", "a"], ["GEODIST", "nokey", "a", "b"],
        ["GEOADD", "new", "1", "1", "m"], ["GEOADD", "new", "XX", "1", "1", "x"],
    ])


GEO_COMMANDS = ["geoadd", "geodist", "geohash", "geopos", "geosearch", "geosearchstore",
                "georadius", "georadiusbymember", "georadius_ro", "georadiusbymember_ro"]


@pytest.mark.parametrize("name", GEO_COMMANDS)
def test_command_info(differ, name):
    differ.check("COMMAND", "INFO", name)


def test_command_getkeys(differ):
    for argv in (["GEORADIUS", "g", "1", "2", "3", "km", "STORE", "dst"],
                 ["GEORADIUS", "g", "1", "2", "3", "km", "storedist", "dst"],
                 ["GEORADIUSBYMEMBER", "g", "m", "3", "km", "STORE", "dst"],
                 ["GEORADIUS", "g", "1", "2", "3", "km"],
                 ["GEORADIUS", "g", "1", "2", "3", "km", "STORE", "a", "STOREDIST", "b"],
                 ["GEORADIUS", "g", "1", "2", "3", "km", "STORE"],
                 ["GEORADIUS", "g", "1", "2", "store", "km", "STORE", "a"],
                 ["GEORADIUSBYMEMBER", "g", "store", "2", "km"],
                 ["GEOSEARCHSTORE", "dst", "src", "FROMMEMBER", "m", "BYRADIUS", "1", "km"],
                 ["GEOADD", "g", "1", "2", "m"]):
        differ.check("COMMAND", "GETKEYS", *argv)


def test_acl_category(differ):
    # ACL CAT lists in the order of Redis's command dict: compared as sets.
    assert sorted(parse(differ.ours.call("ACL", "CAT", "geo"))) == sorted(
        parse(differ.theirs.call("ACL", "CAT", "geo")))
    for client in (differ.ours, differ.theirs):
        client.call("ACL", "SETUSER", "geouser", "on", "nopass", "+@all", "-@geo", "~*")
    # ACL DRYRUN's denial names the user since Redis 7.2 ("This user" in 7.0).
    for name in ("GEOADD", "GEOPOS", "GEORADIUS_RO"):
        ours = differ.ours.call("ACL", "DRYRUN", "geouser", name, "g", "1", "1", "m", "km")
        theirs = differ.theirs.call("ACL", "DRYRUN", "geouser", name, "g", "1", "1", "m", "km")
        assert b"no permissions to run the '%s' command" % name.lower().encode() in ours
        assert parse(ours).replace(b"User geouser", b"This user") == parse(theirs)
    differ.check("ACL", "DRYRUN", "geouser", "ZADD", "g", "1", "m")
    # keys: the STORE destinations are written keys
    for client in (differ.ours, differ.theirs):
        client.call("ACL", "SETUSER", "keyuser", "on", "nopass", "+@all", "~g*")
    for argv in (["GEORADIUS", "g", "1", "1", "1", "km", "STORE", "other"],
                 ["GEORADIUS", "g", "1", "1", "1", "km", "STOREDIST", "gother"],
                 ["GEORADIUSBYMEMBER", "g", "m", "1", "km", "store", "other"],
                 ["GEOSEARCHSTORE", "other", "g", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
                 ["GEOSEARCH", "other", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"],
                 ["GEOADD", "gg", "1", "1", "m"]):
        ours = differ.ours.call("ACL", "DRYRUN", "keyuser", *argv)
        theirs = differ.theirs.call("ACL", "DRYRUN", "keyuser", *argv)
        assert parse(ours).replace(b"User keyuser", b"This user") == parse(theirs), argv
    for client in (differ.ours, differ.theirs):
        client.call("ACL", "DELUSER", "geouser", "keyuser")
