"""Geo commands through redis-py's geo helpers, over real sockets: sync and
asyncio clients, RESP2 and RESP3, MULTI, AOF replay and DEBUG RELOAD of a
geo set (it is a sorted set), and the errors redis-py surfaces."""

from __future__ import annotations

import pytest
import redis
import redis.asyncio

from tests.support.rawclient import RawClient
from tidelog.server.embed import EmbeddedServer

SICILY = (13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")

# What a geo set holds for the points above (the redis.io GEOADD page's example).
PALERMO = (13.361389338970184, 38.1155563954963)
CATANIA = (15.087267458438873, 37.50266842333162)


def positions(reply) -> list:
    """GEOPOS as tuples (redis-py makes tuples of RESP2's strings, lists in RESP3)."""
    return [None if p is None else tuple(p) for p in reply]


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def client(tidelog, request):
    c = redis.Redis(port=tidelog.port, protocol=request.param)
    yield c
    c.close()


def test_geoadd_geopos_geodist_geohash(client):
    assert client.geoadd("Sicily", SICILY) == 2
    assert client.geoadd("Sicily", SICILY) == 0
    assert client.geoadd("Sicily", (13.0, 38.0, "Palermo"), xx=True, ch=True) == 1
    assert client.geoadd("Sicily", (13.361389, 38.115556, "Palermo", 1, 1, "x"), nx=True) == 1
    assert client.geoadd("Sicily", SICILY, ch=True) == 1
    assert positions(client.geopos("Sicily", "Palermo", "Catania", "nope")) == [PALERMO, CATANIA, None]
    assert client.geodist("Sicily", "Palermo", "Catania") == 166274.1516
    assert client.geodist("Sicily", "Palermo", "Catania", unit="km") == 166.2742
    assert client.geodist("Sicily", "Palermo", "nope") is None
    hashes = client.geohash("Sicily", "Palermo", "Catania", "nope")  # redis-py decodes them
    assert [h.decode() if isinstance(h, bytes) else h for h in hashes] == [
        "sqc8b49rny0", "sqdtr74hyu0", None]
    assert client.type("Sicily") == b"zset"
    assert client.zscore("Sicily", "Palermo") == 3479099956230698


def test_geosearch_and_store(client):
    client.geoadd("Sicily", SICILY)
    assert client.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km",
                            sort="ASC") == [b"Catania", b"Palermo"]
    rows = client.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km",
                            withdist=True, withcoord=True, withhash=True, sort="DESC")
    assert rows == [[b"Palermo", 190.4424, 3479099956230698, PALERMO],
                    [b"Catania", 56.4413, 3479447370796909, CATANIA]]
    assert client.geosearch("Sicily", member="Palermo", width=400, height=400, unit="km",
                            count=1, withdist=True) == [[b"Palermo", 0.0]]
    assert client.geosearchstore("dst", "Sicily", longitude=15, latitude=37, radius=200,
                                 unit="km", storedist=True) == 2
    assert [tuple(x) for x in client.zrange("dst", 0, -1, withscores=True)] == [
        (b"Catania", 56.441257870158204), (b"Palermo", 190.44242984775784)]
    assert client.georadius("Sicily", 15, 37, 200, unit="km", withdist=True, sort="ASC") == [
        [b"Catania", 56.4413], [b"Palermo", 190.4424]]
    assert client.georadiusbymember("Sicily", "Palermo", 200, unit="km", store="d2") == 2
    assert client.zrange("d2", 0, -1) == [b"Palermo", b"Catania"]
    assert client.georadius("nokey", 15, 37, 200, unit="km") == []
    with pytest.raises(redis.ResponseError, match="^could not decode requested zset member$"):
        client.geosearch("Sicily", member="nope", radius=1, unit="km")
    with pytest.raises(redis.ResponseError, match=r"^invalid longitude,latitude pair "
                                                  r"200\.000000,1\.000000$"):
        client.geoadd("Sicily", (200, 1, "x"))
    with pytest.raises(redis.ResponseError, match="^COUNT must be > 0$"):
        client.execute_command("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1",
                               "km", "COUNT", "0")
    with pytest.raises(redis.ResponseError, match="^unsupported unit provided"):
        client.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "parsec")
    client.set("str", "x")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        client.geopos("str", "a")


def test_resp3_double_coordinates(tidelog):
    """GEOPOS coordinates are RESP3 doubles; distances stay bulk strings."""
    raw = RawClient(tidelog.port)
    try:
        raw.call("HELLO", "3")
        raw.call("GEOADD", "g", *map(str, SICILY))
        assert raw.call("GEOPOS", "g", "Palermo", "nope") == (
            b"*2\r\n*2\r\n,13.361389338970184\r\n,38.1155563954963\r\n_\r\n")
        assert raw.call("GEODIST", "g", "Palermo", "Catania") == b"$11\r\n166274.1516\r\n"
        assert raw.call("GEOHASH", "g", "nope") == b"*1\r\n_\r\n"
        raw.call("HELLO", "2")
        assert raw.call("GEOPOS", "g", "Palermo", "nope") == (
            b"*2\r\n*2\r\n$18\r\n13.361389338970184\r\n$16\r\n38.1155563954963\r\n*-1\r\n")
    finally:
        raw.close()


def test_multi(client):
    pipe = client.pipeline(transaction=True)
    pipe.geoadd("g", SICILY)
    pipe.geodist("g", "Palermo", "Catania", unit="km")
    pipe.geosearchstore("d", "g", member="Catania", radius=100, unit="km")
    assert pipe.execute() == [2, 166.2742, 1]


async def test_asyncio(tidelog):
    for protocol in (2, 3):
        client = redis.asyncio.Redis(port=tidelog.port, protocol=protocol)
        try:
            await client.delete("g")
            assert await client.geoadd("g", SICILY) == 2
            assert positions(await client.geopos("g", "Catania")) == [CATANIA]
            assert await client.geosearch("g", member="Palermo", radius=300, unit="km",
                                          withdist=True, sort="ASC") == [
                [b"Palermo", 0.0], [b"Catania", 166.2742]]
            pipe = client.pipeline(transaction=False)
            for i in range(200):
                pipe.geoadd("many", (i * 0.01, i * 0.01, f"p{i}"))
            await pipe.execute()
            near = await client.geosearch("many", longitude=0, latitude=0, radius=10,
                                          unit="km", count=5)
            assert near == [b"p0", b"p1", b"p2", b"p3", b"p4"]
        finally:
            await client.aclose()


def test_aof_replay_and_reload(tmp_path):
    """GEOADD is logged as ZADD with the geohash scores; after a restart the
    positions are the same, and DEBUG RELOAD keeps them too."""
    data = tmp_path / "data"
    with EmbeddedServer(port=0, dir=str(data), appendonly="yes", save="") as srv:
        c = redis.Redis(port=srv.port)
        c.geoadd("Sicily", SICILY)
        c.geosearchstore("near", "Sicily", longitude=15, latitude=37, radius=100, unit="km")
        before = c.geopos("Sicily", "Palermo", "Catania")
        assert c.execute_command("DEBUG", "RELOAD") == b"OK"
        assert c.geopos("Sicily", "Palermo", "Catania") == before
        c.close()
    aof = b"".join(p.read_bytes() for p in (data / "appendonlydir").glob("*.incr.aof"))
    assert b"$4\r\nzadd\r\n$6\r\nSicily\r\n$16\r\n3479099956230698\r\n" in aof
    assert b"GEOADD" not in aof.upper().replace(b"GEOSEARCHSTORE", b"")
    with EmbeddedServer(port=0, dir=str(data), appendonly="yes", save="") as srv:
        c = redis.Redis(port=srv.port)
        assert c.geopos("Sicily", "Palermo", "Catania") == before
        assert c.zrange("near", 0, -1) == [b"Catania"]
        c.close()
