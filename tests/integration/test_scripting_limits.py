"""Scripts at their limits over real sockets with redis-py (sync and
asyncio, RESP2 and RESP3): a call with 8,001 arguments, the line an error
in a tail call names, redis.error_reply's code, errors counted once, and
shebang flags deciding OOM before the script runs."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio

BIG = ("local a = {} for i=1,7999 do a[i]=i end\n"
       "return redis.call('rpush', KEYS[1], unpack(a))")


@pytest.mark.parametrize("protocol", [2, 3])
def test_big_calls_and_error_lines(tidelog_srv, protocol):
    r = redis.Redis(port=tidelog_srv.port, protocol=protocol)
    r.delete("big")
    assert r.eval(BIG, 1, "big") == 7999
    assert r.lrange("big", -2, -1) == [b"7998", b"7999"]
    with pytest.raises(redis.ResponseError, match="too many results to unpack"):
        r.eval("local a = {} for i=1,8000 do a[i]=i end return redis.call('rpush', 'x', unpack(a))", 0)
    r.set("s", "abc")
    with pytest.raises(redis.ResponseError) as err:
        r.eval("\n\nreturn redis.call('incr', 's')", 0)
    assert str(err.value).endswith("on @user_script:3.")
    with pytest.raises(redis.ResponseError, match=r"^user_script:2: Attempt to modify a readonly"):
        r.eval("local g = getmetatable(_G)\ng.__index = {}", 0)
    r.close()


def test_error_replies_and_their_statistics(tidelog_srv):
    r = redis.Redis(port=tidelog_srv.port)
    r.config_resetstat()
    with pytest.raises(redis.ResponseError, match="^MY_CODE custom msg$"):
        r.eval("return redis.error_reply('MY_CODE custom msg')", 0)
    with pytest.raises(redis.ResponseError, match="^DB index is out of range"):
        r.eval("return redis.pcall('select', 99)", 0)
    errors = r.info("errorstats")
    assert errors["errorstat_MY_CODE"] == {"count": 1}
    assert errors["errorstat_ERR"] == {"count": 1}  # counted where SELECT failed, once
    stats = r.info("commandstats")
    assert stats["cmdstat_eval"]["failed_calls"] == 2
    assert stats["cmdstat_select"]["failed_calls"] == 1
    r.close()


def test_shebang_flags_decide_oom_asyncio(tidelog_srv):
    async def main():
        r = redis.asyncio.Redis(port=tidelog_srv.port)
        await r.config_set("maxmemory", 1)
        try:
            with pytest.raises(redis.exceptions.OutOfMemoryError):
                await r.eval("#!lua\nreturn 1", 0)
            assert await r.eval("#!lua flags=no-writes\nreturn 1", 0) == 1
            assert await r.eval("return 2", 0) == 2
        finally:
            await r.config_set("maxmemory", 0)
        assert await r.eval("#!lua\nreturn 1", 0) == 1
        await r.aclose()

    asyncio.run(main())
