"""Micro-benchmark of the typed kernels: the pure-Python twin against the
compiled one, in one process (src/tidelog/kernels.py).

    .venv/bin/python bench/kernels.py            # both twins (pure only if not compiled)
    .venv/bin/python bench/kernels.py --repeat 50 --json out.json

Cases (CPU time per operation, best of ``--repeat`` interleaved runs, to
resist a busy machine):

- ``parse XADD x128``: a pipeline of 128 ``XADD s * sensor 17 temp 21.5``
  fed at once, all commands taken out (per command);
- ``parse PING x128``: the same with ``PING`` (per command);
- ``encode XRANGE 10``: ``encode_into`` of an XRANGE reply of 10 entries
  (``[[id, [f, v, f, v]], ...]``) in RESP2 (per reply);
- ``encode +OK / int``: one status reply and one integer (per pair);
- ``listpack entry``: the elements of one stream entry, ``encode_string``
  of two values that are numbers and two field names, and ``encode_int``
  of two deltas, joined (per entry);
- ``listpack read``: ``read_bytes`` over the 6 elements of that entry;
- ``ID format`` / ``ID parse``: ``bytes(StreamID)`` and ``parse_id`` of
  ``1732000000000-17`` (per ID).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from tidelog import kernels  # noqa: E402


def twins() -> dict[str, dict[str, object]]:
    """``{"compiled": {name: module}, "pure": {...}}`` (no "compiled" when not built)."""
    installed = {name: importlib.import_module(name) for name in kernels.KERNELS}
    out = {}
    if all(kernels.is_compiled(m) for m in installed.values()):
        out["compiled"] = installed
    out["pure"] = {name: kernels.load_pure(name) for name in kernels.KERNELS}
    return out


def cases(mods: dict[str, object]) -> dict[str, tuple[object, int]]:
    """name -> (function of no argument, operations per call)."""
    parser = mods["tidelog.resp.parser"]
    encoder = mods["tidelog.resp.encoder"]
    lp = mods["tidelog.types.listpack"]
    ids = mods["tidelog.ids"]

    xadd = (b"*7\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$6\r\nsensor\r\n$2\r\n17\r\n"
            b"$4\r\ntemp\r\n$4\r\n21.5\r\n")
    ping = b"*1\r\n$4\r\nPING\r\n"

    def parse(data: bytes, n: int):
        def run() -> None:
            p = parser.RequestParser()
            p.feed(data)
            nxt = p.next_command
            for _ in range(n):
                nxt()
        return run

    from tidelog.resp.replies import OK

    entries = [[b"%d-0" % (1000 + i), [b"sensor", b"17", b"temp", b"21.5"]] for i in range(10)]

    def encode_xrange() -> None:
        encoder.encode_into(bytearray(), entries, 2)

    def encode_small() -> None:
        out = bytearray()
        encoder.encode_into(out, OK, 2)
        encoder.encode_into(out, 42, 2)

    encode_string, encode_int = lp.encode_string, lp.encode_int

    def lp_entry() -> None:
        b"".join((encode_int(2), encode_int(5), encode_int(0), encode_string(b"17"),
                  encode_string(b"21.5"), encode_string(b"sensor"), encode_string(b"temp")))

    packed = lp.pack([2, 5, 0, b"17", b"21.5", b"sensor", b"temp"])
    read_bytes = lp.read_bytes

    def lp_read() -> None:
        p = 6
        for _ in range(7):
            _, p = read_bytes(packed, p)

    sid = ids.StreamID(1732000000000, 17)
    parse_id = ids.parse_id

    def id_format() -> None:
        bytes(sid)

    def id_parse() -> None:
        parse_id(b"1732000000000-17")

    return {
        "parse XADD x128": (parse(xadd * 128, 128), 128),
        "parse PING x128": (parse(ping * 128, 128), 128),
        "encode XRANGE 10": (encode_xrange, 1),
        "encode +OK / int": (encode_small, 1),
        "listpack entry": (lp_entry, 1),
        "listpack read": (lp_read, 1),
        "ID format": (id_format, 1),
        "ID parse": (id_parse, 1),
    }


def measure(repeat: int, target: float) -> dict[str, dict[str, float]]:
    by_twin = {twin: cases(mods) for twin, mods in twins().items()}
    names = list(next(iter(by_twin.values())))
    # Calibrate loops so one timed run lasts about `target` seconds (pure twin).
    loops = {}
    for name in names:
        fn, _ = by_twin["pure"][name]
        n = 1
        while True:
            t0 = time.process_time()
            for _ in range(n):
                fn()
            if time.process_time() - t0 >= target / 4 or n > 10**7:
                break
            n *= 2
        loops[name] = n * 4
    best = {twin: dict.fromkeys(names, float("inf")) for twin in by_twin}
    for _ in range(repeat):
        for name in names:
            for twin, table in by_twin.items():
                fn, ops = table[name]
                n = loops[name]
                t0 = time.process_time()
                for _ in range(n):
                    fn()
                per_op = (time.process_time() - t0) / (n * ops)
                best[twin][name] = min(best[twin][name], per_op)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=15, help="interleaved runs; the best counts (default 15)")
    ap.add_argument("--target", type=float, default=0.1, help="seconds per timed run (default 0.1)")
    ap.add_argument("--json", help="also write the figures (seconds per operation) here")
    args = ap.parse_args()
    best = measure(args.repeat, args.target)
    twins_ = list(best)
    print(f"Python {sys.version.split()[0]}; kernels in use by default: {kernels.status()}; "
          f"best of {args.repeat} interleaved runs, CPU time per operation\n")
    head = "| case | " + " | ".join(f"{t} (µs)" for t in twins_)
    head += " | pure/compiled |" if "compiled" in best else " |"
    print(head)
    print("|---" * (len(twins_) + 1 + ("compiled" in best)) + "|")
    for name in best["pure"]:
        row = f"| {name} | " + " | ".join(f"{best[t][name] * 1e6:.3f}" for t in twins_)
        if "compiled" in best:
            row += f" | {best['pure'][name] / best['compiled'][name]:.1f}x"
        print(row + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(best, indent=2) + "\n")


if __name__ == "__main__":
    main()
