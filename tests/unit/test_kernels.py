"""Which twin of the typed kernels runs (src/tidelog/kernels.py): the compiled
one whenever the build compiled them, the pure one with TIDELOG_PURE=1, and
never an extension built from another version of its source."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from tidelog import kernels

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "TIDELOG_PURE"}
    environ.update(env)
    done = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


STATUS = "import tidelog.kernels as k, tidelog.resp.parser as p; print(k.status(), p.__file__)"


def test_the_compiled_build_is_the_one_in_use():
    """When the build compiled the kernels, they are what Tidelog imports."""
    manifest = kernels.read_manifest()
    state, parser_file = _run(STATUS).split()
    if not manifest:
        assert state == "pure" and parser_file.endswith(".py")
        pytest.skip("the kernels were not compiled in this install (no C compiler?)")
    assert sorted(manifest) == sorted(kernels.KERNELS)
    assert state == "compiled"
    assert Path(parser_file).name == manifest["tidelog.resp.parser"]["file"]
    if not kernels.pure_forced():
        for name in kernels.KERNELS:
            module = importlib.import_module(name)
            assert kernels.is_compiled(module), name
            assert Path(module.__file__).name == manifest[name]["file"]


def test_tidelog_pure_forces_the_pure_twins():
    state, parser_file = _run(STATUS, TIDELOG_PURE="1").split()
    assert state == "pure"
    assert parser_file.endswith("parser.py")


def test_the_pure_twins_run_without_cython_installed():
    code = """
import sys
class NoCython:
    def find_spec(self, name, path=None, target=None):
        if name == "cython" or name.startswith(("cython.", "Cython")):
            raise ImportError(name)
sys.meta_path.insert(0, NoCython())
from tidelog.resp import RequestParser, encode
from tidelog.ids import parse_id
from tidelog.types import listpack
from tidelog.callstats import CallStats, now_ns
import tidelog.kernels as k
p = RequestParser(); p.feed(b"*2\\r\\n$4\\r\\nECHO\\r\\n$2\\r\\nhi\\r\\n")
assert p.next_command() == [b"ECHO", b"hi"]
assert encode([b"a", 1], 2) == b"*2\\r\\n$1\\r\\na\\r\\n:1\\r\\n"
assert parse_id(b"5") == (5, 0)
assert listpack.unpack(listpack.pack([b"x", 7])) == [b"x", 7]
stats = CallStats(); stats.stop(now_ns()); assert stats.calls == 1
print(k.status(), "cython" in sys.modules)
"""
    assert _run(code, TIDELOG_PURE="1") == "pure False"


def _fake_build(tmp_path: Path, built_from: bytes) -> tuple[str, dict]:
    source = tmp_path / "ids.py"
    source.write_bytes(b"X = 1\n")
    ext = tmp_path / ("ids" + importlib.machinery.EXTENSION_SUFFIXES[0])
    ext.write_bytes(b"not really an extension")
    manifest = {"tidelog.ids": {"file": ext.name, "sha256": hashlib.sha256(built_from).hexdigest()}}
    return str(source), manifest


def test_an_extension_built_from_the_same_source_is_chosen(tmp_path):
    source, manifest = _fake_build(tmp_path, b"X = 1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = kernels.compiled_path("tidelog.ids", source, manifest)
    assert path is not None and path.endswith(manifest["tidelog.ids"]["file"])


def test_a_stale_extension_is_never_loaded(tmp_path):
    """Built from an older .py: the pure twin runs, and a warning says why."""
    source, manifest = _fake_build(tmp_path, b"X = 0\n")
    with pytest.warns(RuntimeWarning, match="built from another version of ids.py"):
        assert kernels.compiled_path("tidelog.ids", source, manifest) is None


def test_a_missing_extension_falls_back_to_the_pure_twin(tmp_path):
    source, manifest = _fake_build(tmp_path, b"X = 1\n")
    (tmp_path / manifest["tidelog.ids"]["file"]).unlink()
    with pytest.warns(RuntimeWarning, match="missing"):
        assert kernels.compiled_path("tidelog.ids", source, manifest) is None
    assert kernels.compiled_path("tidelog.resp.parser", source, manifest) is None  # not built


def test_the_manifest_matches_the_sources_after_a_build():
    """`make` rebuilds when a kernel source changes: the digests are current."""
    manifest = kernels.read_manifest()
    if not manifest:
        pytest.skip("the kernels were not compiled in this install")
    for name, entry in manifest.items():
        module = importlib.import_module(name)
        source = Path(module.__file__).with_name(name.rpartition(".")[2] + ".py")
        assert entry["sha256"] == kernels.source_digest(str(source)), f"{name} is stale: run make"
    json.dumps(manifest)


def test_info_server_says_which_kernels_run(r):
    info = r.info("server")
    assert info["tidelog_kernels"] == kernels.status()
    assert info["tidelog_kernels"] in ("compiled", "pure")
