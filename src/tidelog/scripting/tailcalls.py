"""Compiled Lua 5.1 chunks with their tail calls made plain calls.

Why.  Redis's library functions (``redis.call``, ``unpack``, ``pcall`` ...)
are C functions; some of ours are Lua functions (:mod:`.runtime` wraps the
Python callables so that a call may take more arguments than lupa's C entry
point has stack for, and the sandbox's ``unpack``, ``pcall`` ... are Lua).
In Lua 5.1, ``return f(...)`` into a Lua function replaces the caller's
frame (a tail call), where into a C function it does not.  An error raised
there would lose the script's line, which Redis names in the error
(``user_script:3: ...``, ``on @user_script:3.``).  So a script is compiled,
dumped (``string.dump``), its ``OP_TAILCALL`` instructions turned into
``OP_CALL`` (the ``OP_RETURN A 0`` that always follows returns what the call
left, so the values returned are the same) and loaded again.  What changes:
a tail call takes a call level, so endless tail recursion stops with Lua's
``stack overflow`` (about 20,000 levels, as any other recursion), and an
``error(msg, 2)`` raised in a tail-called function names its caller's line.

The dump format (lundump.c of Lua 5.1): a 12-byte header (signature, version
0x51, format 0, endianness, the sizes of int, size_t, Instruction and
lua_Number, an integral flag), then the main function: source name,
line defined, last line defined, four bytes (upvalues, parameters, vararg
flag, stack size), the code, the constants, the nested functions (each in
this same form), and the debug information.  Only the code is changed.
"""

from __future__ import annotations

import struct

SIGNATURE = b"\x1bLua\x51\x00"
OP_CALL, OP_TAILCALL = 28, 29
_NIL, _BOOLEAN, _NUMBER, _STRING = 0, 1, 3, 4


class _Reader:
    """A cursor over a dump, for the sizes its header gives."""

    def __init__(self, data: bytearray) -> None:
        self.data = data
        if bytes(data[:6]) != SIGNATURE or len(data) < 12:
            raise ValueError("not a Lua 5.1 chunk")
        little, int_size, size_t_size, instr_size, number_size = data[6:11]
        if instr_size != 4 or int_size not in (4, 8) or size_t_size not in (4, 8):
            raise ValueError("unexpected Lua 5.1 chunk sizes")
        order = "<" if little else ">"
        self.order = order
        self.int = struct.Struct(order + ("i" if int_size == 4 else "q"))
        self.size_t = struct.Struct(order + ("I" if size_t_size == 4 else "Q"))
        self.number_size = number_size
        self.pos = 12

    def integer(self) -> int:
        (v,) = self.int.unpack_from(self.data, self.pos)
        self.pos += self.int.size
        return v

    def string(self) -> None:
        (n,) = self.size_t.unpack_from(self.data, self.pos)
        self.pos += self.size_t.size + n

    def function(self) -> None:
        """Read one function, turning its tail calls into plain calls."""
        self.string()                       # source
        self.pos += 2 * self.int.size + 4   # line defined, last line, 4 bytes
        n = self.integer()                  # code
        data, little = self.data, self.order == "<"
        for at in range(self.pos, self.pos + 4 * n, 4):
            low = at if little else at + 3  # the byte holding the opcode's 6 bits
            if data[low] & 0x3F == OP_TAILCALL:
                data[low] = (data[low] & 0xC0) | OP_CALL
        self.pos += 4 * n
        for _ in range(self.integer()):     # constants
            kind = data[self.pos]
            self.pos += 1
            if kind == _BOOLEAN:
                self.pos += 1
            elif kind == _NUMBER:
                self.pos += self.number_size
            elif kind == _STRING:
                self.string()
            elif kind != _NIL:
                raise ValueError("unknown constant type %d" % kind)
        for _ in range(self.integer()):     # nested functions
            self.function()
        n = self.integer()                  # line info
        self.pos += self.int.size * n
        for _ in range(self.integer()):     # local variables: name, start, end
            self.string()
            self.pos += 2 * self.int.size
        for _ in range(self.integer()):     # upvalue names
            self.string()


def without_tail_calls(dump: bytes) -> bytes:
    """The dumped chunk with each ``OP_TAILCALL`` an ``OP_CALL``; ValueError
    for what is not a Lua 5.1 dump of a form this reads."""
    data = bytearray(dump)
    reader = _Reader(data)
    reader.function()
    if reader.pos != len(data):
        raise ValueError("trailing bytes after the chunk")
    return bytes(data)
