"""MODULE, CLUSTER without cluster mode, LOLWUT and DEBUG ERROR from redis-py
over real sockets (sync and asyncio, RESP2 and RESP3), and a config file with
``loadmodule`` stopping tidelog-server.

Pages: https://redis.io/commands/module-list, https://redis.io/commands/lolwut,
https://redis.io/commands/cluster-info."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio

from tests.support.processes import server_command, server_env
from tests.support.redis_oracle import free_port
from tidelog import REDIS_VERSION


@pytest.mark.parametrize("protocol", [2, 3])
def test_module_commands_from_redis_py(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol) as client:
        assert client.module_list() == []
        with pytest.raises(redis.ResponseError, match="^Error loading the extension. "
                                                      "Tidelog does not load Redis modules$"):
            client.module_load("/usr/lib/redis/modules/redisbloom.so")
        with pytest.raises(redis.ResponseError, match="no such module with that name"):
            client.module_unload("bf")


@pytest.mark.parametrize("protocol", [2, 3])
def test_cluster_disabled_from_redis_py(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol) as client:
        for call in (lambda: client.execute_command("CLUSTER", "INFO"),
                     lambda: client.execute_command("CLUSTER", "KEYSLOT", "k"),
                     lambda: client.execute_command("CLUSTER", "HELP")):
            with pytest.raises(redis.ResponseError, match="^This instance has cluster support disabled$"):
                call()
        assert client.acl_setuser("ops", enabled=True, nopass=True, commands=["+cluster"])


@pytest.mark.parametrize("protocol", [2, 3])
def test_lolwut_from_redis_py(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol) as client:
        assert client.lolwut(3) == f"Redis ver. {REDIS_VERSION}\n".encode()
        art = client.lolwut(5, 20, 3, 3).decode()
        assert art.endswith(f"schotter, plotter on paper, 1968. Redis ver. {REDIS_VERSION}\n")
        assert client.lolwut().decode().endswith(f"Redis ver. {REDIS_VERSION}\n")


def test_debug_error_from_redis_py(tidelog):
    with redis.Redis(port=tidelog.port) as client:
        with pytest.raises(redis.ResponseError, match="^made up failure$"):
            client.execute_command("DEBUG", "ERROR", "ERR made up failure")


def test_asyncio_client(tidelog):
    async def run():
        client = redis.asyncio.Redis(port=tidelog.port, protocol=3)
        try:
            assert await client.module_list() == []
            assert await client.lolwut(2) == f"Redis ver. {REDIS_VERSION}\n".encode()
            with pytest.raises(redis.ResponseError, match="cluster support disabled"):
                await client.execute_command("CLUSTER", "MYID")
        finally:
            await client.aclose()

    asyncio.run(run())


def test_loadmodule_in_the_config_file_stops_the_server(tmp_path):
    import subprocess
    conf = tmp_path / "tidelog.conf"
    conf.write_text(f"port {free_port()}\nloadmodule /usr/lib/redis/modules/redisearch.so\n")
    result = subprocess.run(server_command() + [str(conf)], cwd=tmp_path, env=server_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "FATAL CONFIG FILE ERROR" in output
    assert "Tidelog does not load Redis modules" in output
