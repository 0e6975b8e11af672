"""The typed kernels and which twin of them runs.

Five modules are *kernels*: the request parser (``resp/parser.py``), the
reply encoder (``resp/encoder.py``), listpacks (``types/listpack.py``),
stream IDs (``ids.py``) and the commands' call statistics
(``callstats.py``).  Each is one ``.py`` file in Cython's pure-Python
mode, so it exists twice:

* the **pure** twin: the ``.py`` run by the interpreter, as any module;
* the **compiled** twin: the same file compiled by Cython with its static
  types (``cython.int``, ``@cython.cfunc``...) into an extension module
  beside it, when ``pip install`` / ``make`` found a C compiler
  (``setup.py``).

Their interfaces are plain (bytes, ints, lists, the same exceptions and
names), so no other module knows which twin runs.

Which twin is imported is decided here, not by Python's default order
(which would take any ``.so`` lying beside the ``.py``).  ``install()``
(run by ``tidelog/__init__.py``) puts a finder first on ``sys.meta_path``
that, for the kernel names only:

1. loads the ``.py`` when ``TIDELOG_PURE`` is set (to anything but ``0``);
2. else loads the extension listed for that module in ``kernels-built.json``
   (written by the build next to the extensions), but only if the SHA-256
   of the ``.py`` today is the one the extension was compiled from.  An
   extension built from an older source is never loaded: a warning says
   so, and the pure twin runs until it is rebuilt (``make`` rebuilds when
   a kernel source changes);
3. else (nothing was compiled) loads the ``.py``.

``status()`` says which twin runs: ``"compiled"``, ``"pure"``, or
``"mixed"`` (some extensions were stale or missing).  INFO server reports
it as ``tidelog_kernels``.

When Cython itself is not installed, the pure twins import ``PURE_CYTHON``
from here instead of the ``cython`` module: the few names they use, all
doing nothing (the compiled twins never import ``cython`` at run time).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from typing import Any

KERNELS = (
    "tidelog.ids",
    "tidelog.types.listpack",
    "tidelog.resp.parser",
    "tidelog.resp.encoder",
    "tidelog.callstats",
)
MANIFEST = "kernels-built.json"  # in the tidelog package directory


def pure_forced() -> bool:
    """Does the environment ask for the pure-Python twins (``TIDELOG_PURE``)?"""
    return os.environ.get("TIDELOG_PURE", "") not in ("", "0")


def source_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def read_manifest(package_dir: str | None = None) -> dict[str, dict[str, str]]:
    """``{module: {"file": extension file name, "sha256": of its .py}}`` as
    the last build wrote it; empty when nothing was compiled."""
    path = os.path.join(package_dir or _package_dir(), MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data.get("modules", {}) if isinstance(data, dict) else {}


def compiled_path(fullname: str, source: str, manifest: dict[str, dict[str, str]]) -> str | None:
    """The extension to load for kernel ``fullname`` whose ``.py`` is
    ``source``, or None for the pure twin (warning when one exists but
    was built from another source)."""
    entry = manifest.get(fullname)
    if not entry:
        return None
    ext = os.path.join(os.path.dirname(source), entry.get("file", ""))
    if not ext.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) or not os.path.isfile(ext):
        warnings.warn(
            f"tidelog: the compiled {fullname} is missing or not for this Python "
            f"({entry.get('file')!r}); using the pure-Python twin",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    if entry.get("sha256") != source_digest(source):
        warnings.warn(
            f"tidelog: the compiled {fullname} was built from another version of "
            f"{os.path.basename(source)}; using the pure-Python twin until it is "
            f"rebuilt (make, or pip install -e .)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    return ext


class KernelFinder:
    """A ``sys.meta_path`` finder for the kernel modules only (see above)."""

    def __init__(self) -> None:
        self._manifest: dict[str, dict[str, str]] | None = None

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in KERNELS or not path:
            return None
        leaf = fullname.rpartition(".")[2]
        for directory in path:
            source = os.path.join(directory, leaf + ".py")
            if os.path.isfile(source):
                break
        else:
            return None
        ext = None
        if not pure_forced():
            if self._manifest is None:
                self._manifest = read_manifest()
            ext = compiled_path(fullname, source, self._manifest)
        if ext is not None:
            loader = importlib.machinery.ExtensionFileLoader(fullname, ext)
            return importlib.util.spec_from_file_location(fullname, ext, loader=loader)
        return importlib.util.spec_from_file_location(fullname, source)


def install() -> None:
    """Put the kernel finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, KernelFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, KernelFinder())


def is_compiled(module: Any) -> bool:
    return isinstance(getattr(module, "__spec__", None) and module.__spec__.loader,
                      importlib.machinery.ExtensionFileLoader)


def status() -> str:
    """``compiled`` / ``pure`` / ``mixed``: which twin of the kernels runs."""
    kinds = {is_compiled(importlib.import_module(name)) for name in KERNELS}
    if kinds == {True}:
        return "compiled"
    if kinds == {False}:
        return "pure"
    return "mixed"


def load_pure(fullname: str) -> Any:
    """A fresh pure twin of kernel ``fullname``, loaded from its ``.py``
    whatever runs (for tests and benchmarks; it is not put in sys.modules)."""
    if fullname not in KERNELS:
        raise ValueError(f"{fullname} is not a kernel")
    parent = importlib.import_module(fullname.rpartition(".")[0])
    leaf = fullname.rpartition(".")[2]
    assert parent.__file__ is not None
    source = os.path.join(os.path.dirname(parent.__file__), leaf + ".py")
    spec = importlib.util.spec_from_file_location(fullname, source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _PureCython:
    """Stands in for the ``cython`` module in the pure twins when Cython
    is not installed: types are placeholders, decorators return what they
    decorate, ``cast``/``declare`` return the value."""

    compiled = False
    NULL = None

    def __getattr__(self, name: str) -> Any:
        return self._anything

    @staticmethod
    def _anything(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # @cython.cfunc and the like
        return lambda f: f  # @cython.locals(...), @cython.exceptval(...)

    @staticmethod
    def cast(type_: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        return value

    @staticmethod
    def declare(type_: Any = None, value: Any = None, **kwargs: Any) -> Any:
        return value


PURE_CYTHON = _PureCython()


def describe() -> str:
    """One line for logs: which twin runs, and why."""
    state = status()
    if state == "compiled":
        return "tidelog kernels: compiled (Cython extensions in use)"
    if pure_forced():
        return "tidelog kernels: pure Python (TIDELOG_PURE is set)"
    if state == "pure":
        return ("tidelog kernels: pure Python (not compiled: no working C compiler "
                "or no Cython at install; `pip install -v` shows why)")
    return "tidelog kernels: mixed (some compiled kernels are stale or missing; run make)"
