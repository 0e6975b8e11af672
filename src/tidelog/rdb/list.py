"""Lists in RDB files.

Written as type 18 (``RDB_TYPE_LIST_QUICKLIST_2``, what Redis 7.0-8.x
write, RDB version 10 and up)::

    length(node count)
    node: length(container: 2 = a listpack, 1 = one plain element)
          string(the listpack blob, or the element)

Our nodes are listpacks of at most 8 KB (the default
``list-max-listpack-size`` of -2), each holding one element at least.

Read: type 18, type 14 (``RDB_TYPE_LIST_QUICKLIST``, Redis 3.2-6.2: a count
of nodes, each a ziplist blob), type 10 (one ziplist) and type 1 (the
plain list: a count, then each element as a string).

Ziplist layout (little endian)::

    u32 total bytes | u32 offset of the last entry | u16 count | entries | 0xFF
    entry: prevlen (1 byte < 254, else 0xFE + u32) | encoding (+ data)

    00pppppp                  string, length in 6 bits
    01pppppp qqqqqqqq         string, length in 14 bits (big endian)
    10000000 + u32 BE length  string
    0xC0 int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8
    0xF1 .. 0xFD              integer 0..12 (the low 4 bits minus one)
"""

from __future__ import annotations

import struct

from ..types import listpack
from ..types.list import List, entry_size, node_limits
from .format import Reader, length_bytes, string_bytes, ziplist_entries

TYPE_LIST = 1
TYPE_LIST_ZIPLIST = 10
TYPE_LIST_QUICKLIST = 14
TYPE_LIST_QUICKLIST_2 = 18

CONTAINER_PLAIN = 1
CONTAINER_PACKED = 2


def _nodes(lst: List) -> list[list[bytes]]:
    """The elements cut into nodes of one listpack each, at most 8 KB
    (one element at least)."""
    limit, _ = node_limits(-2)
    nodes: list[list[bytes]] = []
    current: list[bytes] = []
    size = listpack.HEADER_SIZE + 1
    for item in lst:
        grow = entry_size(item)
        if current and size + grow > limit:
            nodes.append(current)
            current, size = [], listpack.HEADER_SIZE + 1
        current.append(item)
        size += grow
    if current:
        nodes.append(current)
    return nodes


def write_list(lst: List, compress: bool) -> tuple[int, bytes]:
    """(18, the quicklist-2 payload). O(n)."""
    nodes = _nodes(lst)
    out = [length_bytes(len(nodes))]
    for node in nodes:
        out.append(length_bytes(CONTAINER_PACKED))
        out.append(string_bytes(listpack.pack(node), compress))
    return TYPE_LIST_QUICKLIST_2, b"".join(out)


def _as_bytes(value: int | bytes) -> bytes:
    return b"%d" % value if isinstance(value, int) else value


def _unpack_listpack(r: Reader, blob: bytes, at: int) -> list[bytes]:
    try:
        return [_as_bytes(v) for v in listpack.unpack(blob, strict=False)]
    except listpack.ListpackError as exc:
        raise r.fail(f"bad list listpack: {exc}", at) from None


def read_quicklist_2(r: Reader) -> List:
    items: list[bytes] = []
    for _ in range(r.length()):
        at = r.pos
        container = r.length()
        blob = r.string()
        if container == CONTAINER_PLAIN:
            items.append(blob)
        elif container == CONTAINER_PACKED:
            items.extend(_unpack_listpack(r, blob, at))
        else:
            raise r.fail(f"bad quicklist node container {container}", at)
    if not items:
        raise r.fail("empty list")
    return List(items)


def _ziplist(r: Reader) -> list[bytes]:
    at = r.pos
    blob = r.string()
    try:
        return ziplist_entries(blob)
    except (ValueError, IndexError, struct.error) as exc:
        raise r.fail(f"bad list ziplist: {exc}", at) from None


def read_quicklist(r: Reader) -> List:
    items: list[bytes] = []
    for _ in range(r.length()):
        items.extend(_ziplist(r))
    if not items:
        raise r.fail("empty list")
    return List(items)


def read_ziplist(r: Reader) -> List:
    items = _ziplist(r)
    if not items:
        raise r.fail("empty list")
    return List(items)


def read_plain(r: Reader) -> List:
    n = r.length()
    if n == 0:
        raise r.fail("empty list")
    return List([r.string() for _ in range(n)])


def register(writers: dict, readers: dict) -> None:
    writers[List] = write_list
    readers[TYPE_LIST_QUICKLIST_2] = read_quicklist_2
    readers[TYPE_LIST_QUICKLIST] = read_quicklist
    readers[TYPE_LIST_ZIPLIST] = read_ziplist
    readers[TYPE_LIST] = read_plain
