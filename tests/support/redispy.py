"""redis-py as a raw client of the test server: reply callbacks replaced by
the identity, so a test asserts the server's reply as redis-py's RESP parser
reads it (RESP3 maps become dicts), plus small views that read RESP2 and
RESP3 replies alike."""

from __future__ import annotations

import redis

LLONG_MAX = 2**63 - 1
RAW_COMMANDS = ("XADD", "XREAD", "XREADGROUP", "XPENDING", "XCLAIM", "XAUTOCLAIM", "XRANGE",
                "XACK", "XTRIM", "XLEN", "XGROUP CREATE", "XINFO STREAM", "XDEL")


def raw_replies(client: redis.Redis) -> redis.Redis:
    for name in RAW_COMMANDS:
        client.set_response_callback(name, lambda response, **options: response)
    return client


def x(client: redis.Redis, *argv):
    return client.execute_command(*argv)


def as_dict(reply) -> dict:
    """A RESP3 map, or the flat RESP2 array of the same, as a dict."""
    return reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2]))


def streams(reply) -> list[tuple[bytes, list]]:
    """XREAD/XREADGROUP's reply as ``[(key, entries)]`` in RESP2 and RESP3 alike."""
    if reply is None:
        return []
    if isinstance(reply, dict):
        return list(reply.items())
    return [(key, entries) for key, entries in reply]
