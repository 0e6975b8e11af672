"""ARINFO: an array's length, cursor, encoding and slices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import errors
from ...errors import SYNTAX, WRONGTYPE, CommandError
from ...resp.replies import Map
from ...types.array import INDEX_MAX, Array
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


# -- ARINFO -----------------------------------------------------------------------------
@command("arinfo", arity=-2, flags="readonly", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1), or O(N) with FULL where N is the number of slices",
         summary="Returns information about an array.",
         key_specs=[ks("RO", 1)])
def arinfo(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARINFO key [FULL]

    O(1); O(S) with FULL for S slices.  A missing key is an error."""
    full = False
    if len(argv) > 2:
        if len(argv) == 3 and argv[2].lower() == b"full":
            full = True
        else:
            raise CommandError(SYNTAX)
    ar = lookup_read(ctx, argv[1])
    if ar is None:
        raise CommandError(errors.ARRAY_NO_SUCH_KEY)
    if type(ar) is not Array:
        raise CommandError(WRONGTYPE)
    cursor = ar.insert_idx
    items: list[tuple[bytes, Any]] = [
        (b"count", len(ar)),
        (b"len", ar.length),
        (b"next-insert-index",
         0 if cursor is None or cursor == INDEX_MAX else cursor + 1),
        (b"slices", len(ar.slices)),
        (b"directory-size", ar.directory_size),
        (b"super-dir-entries", ar.super_dir_entries),
        (b"slice-size", ar.slice_size),
    ]
    if full:
        items += _slice_stats(ar)
    return Map(items)


def _slice_stats(ar: Array) -> list[tuple[bytes, Any]]:
    """ARINFO FULL's per-encoding figures, from the model of Redis's slice
    encodings the array keeps (types/array.py)."""
    dense, sparse, windows, dense_count, caps = ar.slice_stats()
    return [
        (b"dense-slices", dense),
        (b"sparse-slices", sparse),
        (b"avg-dense-size", windows / dense if dense else 0.0),
        (b"avg-dense-fill", dense_count / windows if windows else 0.0),
        (b"avg-sparse-size", caps / sparse if sparse else 0.0),
    ]
