"""The libraries Redis compiles into its Lua: ``cjson``, ``cmsgpack``, ``bit``, ``struct``.

Each module's ``install(lua)`` sets its global table in a ``lupa.lua51.LuaRuntime``.
They need nothing of the runtime's options (they are Lua code, and Lua values never
cross into Python), only the standard libraries ``coroutine``, ``string``,
``table``, ``math`` and ``newproxy``, present when ``install`` runs.
"""

from __future__ import annotations

from . import bit, cjson, cmsgpack, struct

INSTALLERS = [cjson.install, cmsgpack.install, bit.install, struct.install]

__all__ = ["INSTALLERS"]
