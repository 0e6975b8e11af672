"""Lua scripting: the sandboxed interpreter (:mod:`.runtime`) and the script
cache and runner the engine holds (:mod:`.scripts`)."""
