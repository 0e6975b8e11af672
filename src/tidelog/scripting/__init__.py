"""Lua scripting: the sandboxed interpreter (:mod:`.runtime`), the script
cache and runner the engine holds (:mod:`.scripts`), and the libraries Redis
compiles into its Lua (:mod:`.lualibs`: cjson, cmsgpack, bit, struct)."""
