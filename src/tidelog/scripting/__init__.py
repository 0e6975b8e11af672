"""Lua scripting: the runtime of EVAL/FCALL and the libraries Redis compiles into it."""
