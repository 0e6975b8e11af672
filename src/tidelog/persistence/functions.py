"""FUNCTION DUMP and FUNCTION RESTORE: the libraries in Redis's serialised form.

The payload is, for each library, the RDB function opcode (0xF5) and the
library's code as an RDB string, then the 2-byte little-endian RDB version
and the 8-byte little-endian CRC-64 of everything before it: what
redis-server 7.0 writes and reads.  Registered from the persistence layer,
which has the RDB encoders (as DUMP and RESTORE are).
"""

from __future__ import annotations

import struct

from .. import errors
from ..commands.contract import Ctx, Reply
from ..commands.table import command
from ..errors import CommandError
from ..resp.replies import OK
from ..scripting.scripts import parse_library_header
from . import rdb
from .rdb_format import RdbError, Reader, crc64, string_bytes

_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")


def libraries_payload(codes: list[bytes], version: int, compress: bool) -> bytes:
    body = b"".join(bytes((rdb.OP_FUNCTION2,)) + string_bytes(code, compress) for code in codes)
    body += _U16.pack(version)
    return body + _U64.pack(crc64(body))


def libraries_from_payload(payload: bytes) -> list[bytes]:
    """The library codes of a payload; CommandError as Redis words it."""
    if len(payload) < 10:
        raise CommandError(errors.DUMP_PAYLOAD_WRONG)
    version = _U16.unpack_from(payload, len(payload) - 10)[0]
    if version > rdb.MAX_READ_VERSION or \
            crc64(memoryview(payload)[:len(payload) - 8]) != _U64.unpack_from(payload, len(payload) - 8)[0]:
        raise CommandError(errors.DUMP_PAYLOAD_WRONG)
    r = Reader(bytes(payload[:len(payload) - 10]))
    codes = []
    try:
        while r.pos < len(r.data):
            op = r.byte()
            if op != rdb.OP_FUNCTION2:
                raise CommandError(errors.FUNCTION_RESTORE_BAD_DATA)
            codes.append(r.string())
    except (RdbError, ValueError, IndexError):
        raise CommandError(errors.FUNCTION_RESTORE_BAD_DATA) from None
    return codes


@command("function|dump", arity=2, flags="noscript", group="scripting", since="7.0.0",
         complexity="O(N) where N is the number of functions",
         summary="Dumps all libraries into a serialized binary payload.")
def function_dump(ctx: Ctx, argv: list[bytes]) -> Reply:
    """FUNCTION DUMP"""
    scripts = ctx.engine.scripts
    try:
        version = int(ctx.config["rdb-version"])
    except KeyError:
        version = rdb.DEFAULT_VERSION
    return libraries_payload([lib.code for lib in scripts.libraries.values()], version,
                             bool(ctx.config["rdbcompression"]))


@command("function|restore", arity=-3, flags="write denyoom noscript", group="scripting",
         since="7.0.0", complexity="O(N) where N is the number of functions on the payload",
         summary="Restores all libraries from a payload.")
def function_restore(ctx: Ctx, argv: list[bytes]) -> Reply:
    """FUNCTION RESTORE serialized-value [FLUSH | APPEND | REPLACE]"""
    policy = b"APPEND"
    if len(argv) > 4:  # as Redis words it
        raise errors.subcommand_syntax(argv[1], argv[0])
    if len(argv) == 4:
        policy = argv[3].upper()
        if policy not in (b"FLUSH", b"APPEND", b"REPLACE"):
            raise CommandError(errors.FUNCTION_RESTORE_POLICY)
    codes = libraries_from_payload(argv[2])
    scripts = ctx.engine.scripts
    restore_libraries(scripts, codes, policy)
    ctx.changed()
    ctx.propagate_argv()
    return OK


def restore_libraries(scripts, codes: list[bytes], policy: bytes) -> None:  # type: ignore[no-untyped-def]
    """Load libraries by a RESTORE policy, all or nothing."""
    saved_libraries, saved_functions = dict(scripts.libraries), dict(scripts.functions)
    try:
        if policy == b"FLUSH":
            scripts.flush_functions()
        elif policy == b"APPEND":
            for code in codes:
                name = parse_library_header(code)
                if name in scripts.libraries:
                    raise CommandError(errors.FUNCTION_RESTORE_EXISTS % name)
        for code in codes:
            scripts.load_library(code, policy != b"APPEND")
    except CommandError:
        scripts.libraries, scripts.functions = saved_libraries, saved_functions
        raise
