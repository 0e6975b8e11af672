"""MULTI, EXEC, DISCARD, WATCH and UNWATCH, Redis's multi.c."""
