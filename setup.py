"""Build of Tidelog's typed kernels (everything else is in pyproject.toml).

The kernels (see src/tidelog/kernels.py) are plain ``.py`` files in Cython's
pure-Python mode.  When Cython and a working C compiler are there, ``pip
install`` (and ``make``, which runs ``pip install -e .``) compiles each one
into an extension module beside its ``.py`` and writes
``tidelog/kernels-built.json``: for each module the extension's file name
and the SHA-256 of the ``.py`` it was compiled from.  At import, the kernel
finder loads an extension only if that digest still matches the ``.py``.

Without a compiler (try ``CC=false pip install ...``) or without Cython, the
build logs one line saying so and installs the pure-Python twins: the
install still succeeds.  ``TIDELOG_PURE=1`` at run time forces the pure
twins even when compiled ones exist.

Editable installs (``pip install -e .``) build the extensions in place, in
src/tidelog/, where the package is imported from.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
from hashlib import sha256

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNELS = {
    "tidelog.ids": "src/tidelog/ids.py",
    "tidelog.types.listpack": "src/tidelog/types/listpack.py",
    "tidelog.resp.parser": "src/tidelog/resp/parser.py",
    "tidelog.resp.encoder": "src/tidelog/resp/encoder.py",
    "tidelog.callstats": "src/tidelog/callstats.py",
}
MANIFEST = "kernels-built.json"


def log(message: str) -> None:
    # pip shows a build's output only with -v; the Makefile prints the
    # outcome itself after installing.
    print(f"tidelog: {message}", file=sys.stderr, flush=True)


def kernel_extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:
        log("Cython is not installed: the kernels stay pure Python")
        return []
    extensions = [Extension(name, [path]) for name, path in KERNELS.items()]
    return cythonize(
        extensions,
        language_level=3,
        build_dir="build/cython",  # the generated C, out of the source tree
        quiet=True,
        compiler_directives={"binding": False, "embedsignature": False},
    )


class BuildKernels(build_ext):
    """Compile the kernels if possible; never fail the install because of them."""

    def run(self) -> None:
        manifest_path = os.path.join(
            os.path.dirname(self.get_ext_fullpath("tidelog.ids")), MANIFEST
        )
        if os.path.exists(manifest_path):
            os.remove(manifest_path)  # nothing is trusted until this build succeeds
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as exc:  # no compiler, a failing compiler, missing headers...
            self._remove_outputs()
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log(f"could not compile the kernels ({first}): installing the pure-Python twins")
            return
        modules = {}
        for ext in self.extensions:
            source = KERNELS[ext.name]
            with open(source, "rb") as f:
                digest = sha256(f.read()).hexdigest()
            modules[ext.name] = {
                "file": os.path.basename(self.get_ext_fullpath(ext.name)),
                "sha256": digest,
            }
        with open(manifest_path, "w", encoding="utf-8") as f:
            json.dump({"modules": modules}, f, indent=2, sort_keys=True)
            f.write("\n")
        log(f"compiled kernels: {', '.join(modules)}")

    def _remove_outputs(self) -> None:
        """Remove this build's extensions, and those of an earlier build in
        the source tree (an editable install's), so no extension is left
        beside a pure install (the finder would not load one without the
        manifest anyway)."""
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        paths = [self.get_ext_fullpath(ext.name) for ext in self.extensions]
        paths += [os.path.splitext(source)[0] + suffix for source in KERNELS.values()]
        paths.append(os.path.join("src", "tidelog", MANIFEST))
        for path in paths:
            if os.path.exists(path):
                os.remove(path)


setup(ext_modules=kernel_extensions(), cmdclass={"build_ext": BuildKernels})
