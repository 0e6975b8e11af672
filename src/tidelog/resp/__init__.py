"""RESP, sans-IO: the request parser and the reply encoder.

Nothing here touches a socket (the h11 model): the server feeds bytes in and
writes bytes out.

    parser = RequestParser(max_bulk_len=..., max_query_buffer=...)
    parser.feed(data)
    while (argv := parser.next_command()) is not None:   # list[bytes]
        reply = execute(argv)                             # a reply value
        encode_into(out, reply, proto)                    # proto: 2 or 3

* :mod:`.parser`   -- ``RequestParser``; ``ProtocolError`` (reply
  ``-ERR Protocol error: <str(exc)>`` and close) and its subclass
  ``QueryBufferLimit``.
* :mod:`.replies`  -- the reply value types handlers return.
* :mod:`.encoder`  -- ``encode`` / ``encode_into`` / ``encode_all``: reply values to RESP2 or RESP3.

This package imports nothing else from tidelog but :mod:`tidelog.errors` (the
parser's protocol-error texts, kept with every other Redis error text).
"""

from .encoder import encode, encode_all, encode_into
from .parser import ProtocolError, QueryBufferLimit, RequestParser
from .replies import (
    NULL_ARRAY,
    OK,
    PONG,
    QUEUED,
    DoubleText,
    ErrorReply,
    Map,
    Push,
    RawReply,
    SetReply,
    SimpleString,
    Verbatim,
)

__all__ = [
    "NULL_ARRAY",
    "OK",
    "PONG",
    "QUEUED",
    "DoubleText",
    "ErrorReply",
    "Map",
    "ProtocolError",
    "Push",
    "QueryBufferLimit",
    "RawReply",
    "RequestParser",
    "SetReply",
    "SimpleString",
    "Verbatim",
    "encode",
    "encode_all",
    "encode_into",
]
