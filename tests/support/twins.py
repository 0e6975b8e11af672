"""Run a kernel's unit tests against both twins (src/tidelog/kernels.py).

A kernel test module rebinds the kernel names it uses with a module-scoped,
parametrised, autouse fixture::

    _twin = twins.bind(globals(), "tidelog.resp.parser", ["RequestParser", ...])

Each test then runs once per twin: ``[compiled]`` with the module Tidelog
imports (when that is the compiled extension) and ``[pure]`` with a fresh
copy of the ``.py`` loaded explicitly, so the pure twin is tested whatever
the build.  Without a compiled build there is one run, ``[pure]``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

import pytest

from tidelog import kernels

_PURE: dict[str, Any] = {}


def pure(fullname: str) -> Any:
    """The pure twin of kernel ``fullname`` (loaded once per test session)."""
    if fullname not in _PURE:
        _PURE[fullname] = kernels.load_pure(fullname)
    return _PURE[fullname]


def params(fullname: str) -> list[Any]:
    installed = importlib.import_module(fullname)
    if kernels.is_compiled(installed):
        return [pytest.param(installed, id="compiled"), pytest.param(pure(fullname), id="pure")]
    return [pytest.param(installed, id="pure")]


def bind(namespace: dict[str, Any], fullname: str, names: Iterable[str], alias: str | None = None):
    """A fixture that sets ``namespace[name]`` to each twin's ``name`` (and
    ``namespace[alias]`` to the twin module itself) while its tests run."""
    names = list(names)

    @pytest.fixture(autouse=True, scope="module", params=params(fullname))
    def _twin(request: pytest.FixtureRequest) -> Any:
        module = request.param
        keys = names + ([alias] if alias else [])
        saved = {key: namespace[key] for key in keys}
        namespace.update({name: getattr(module, name) for name in names})
        if alias:
            namespace[alias] = module
        yield module
        namespace.update(saved)

    return _twin
