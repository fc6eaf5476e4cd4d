"""The engine's compiled build: the same ``engine/*.py`` source compiled with Cython (docs/build.md).

As aiohttp builds its parsers: where Cython and a C compiler are present, ``pip install .`` and
``python -m build`` compile the engine's modules (pure-Python mode: the ``.py`` files stay plain
Python, the ``.pxd`` files beside them declare the hot classes' attributes and some locals) and the
wheel is platform-specific; ``CEFISIM_NO_EXTENSIONS=1`` gives the pure package (a ``py3-none-any``
wheel). Without Cython or a working compiler the build says so on one line and stays pure.

An editable install stays pure (``pip install -e .``), so the ``.py`` files you edit are what runs;
``make compiled`` builds the extensions in place beside them (``engine/*.so``) and ``make pure``
removes them again. Everything else about the distribution is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import TextIO

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
ENGINE = ROOT / "engine"
#: the engine's modules are compiled under their installed names: Cython finds a module's .pxd (and
#: a cimport's) by the package path, so they are staged as cefisim/engine/ (engine/ alone would be
#: compiled as a package named ``engine`` and every .pxd silently ignored)
STAGE = ROOT / "build" / "cython-src"
#: the folders of engine/ whose modules are compiled: the venue core, the recorded market and the
#: simulation (the scenario runner and its agents: a replay spends a third of its time in them)
COMPILED = (".", "recorded", "simulation")
#: modules left pure: the package markers (nothing to gain)
PURE = {"__init__"}
#: the setuptools commands that build what gets installed (pip's wheel build runs bdist_wheel; the
#: editable install's editable_wheel is left out on purpose)
BUILDS = {"bdist_wheel", "build", "build_ext", "install"}
DIRECTIVES = {
    "language_level": 3,
    # annotations stay Python's: an int annotation must not become a C long (amounts are unbounded
    # ints), and a str parameter must accept a StrEnum member; types come from the .pxd files only
    "annotation_typing": False,
    "binding": True,
    # a C integer never wraps: an overflow raises OverflowError, which the ledger's sums catch to run again
    # on Python's integers (engine/ledger.py, Two widths)
    "overflowcheck": True,
}


def _progress_stream() -> TextIO:
    """Where progress goes: the terminal when there is one (pip hides a build backend's output unless
    run with -v, and the C compilation takes minutes), else stderr (a CI log, ``pip -v``)."""
    try:
        return open("/dev/tty", "w")  # kept open for the build's lifetime
    except OSError:
        return sys.stderr


_PROGRESS = _progress_stream()


def _notice(text: str) -> None:
    print(f"cefisim: {text}", file=_PROGRESS, flush=True)


class ProgressBuildExt(build_ext):
    """build_ext that says which module it compiles, ``[n/N]``, as it starts each (the parallel build's
    threads each call ``build_extension``)."""

    def build_extensions(self) -> None:
        self._done = 0
        super().build_extensions()
        _notice(f"compiled {len(self.extensions)} engine modules")

    def build_extension(self, ext: Extension) -> None:
        self._done += 1
        _notice(f"[{self._done}/{len(self.extensions)}] compiling {ext.name} (C)")
        super().build_extension(ext)


def _compiler_works() -> bool:
    """Whether a C extension can be built here: a compiler and Python's headers (tried on a tiny file)."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text("#include <Python.h>\nint cefisim_probe(void) { return 0; }\n")
        try:
            compiler.compile([str(src)], output_dir=tmp, include_dirs=[sysconfig.get_paths()["include"]])
        except Exception:  # any failure to compile means: no usable compiler here
            return False
    return True


def _stage() -> list[Path]:
    """Copy the engine's sources to cefisim/engine/ under the staging folder; the modules to compile."""
    pkg = STAGE / "cefisim" / "engine"
    if STAGE.exists():
        shutil.rmtree(STAGE)
    pkg.mkdir(parents=True)
    (STAGE / "cefisim" / "__init__.py").write_text("")
    for folder in COMPILED:
        (pkg / folder).mkdir(parents=True, exist_ok=True)
        for src in sorted([*(ENGINE / folder).glob("*.py"), *(ENGINE / folder).glob("*.pxd")]):
            shutil.copy2(src, pkg / folder / src.name)
    return [
        pkg / folder / p.name
        for folder in COMPILED
        for p in sorted((ENGINE / folder).glob("*.py"))
        if p.stem not in PURE
    ]


def _module_name(staged: Path) -> str:
    """A staged source's installed module name (``cefisim.engine.recorded.market``)."""
    return ".".join(staged.relative_to(STAGE).with_suffix("").parts)


def extensions() -> list[Extension]:
    """The engine's extension modules, or none (the pure build), with the reason on one line."""
    if os.environ.get("CEFISIM_NO_EXTENSIONS"):
        _notice("CEFISIM_NO_EXTENSIONS is set: pure build")
        return []
    if sys.implementation.name != "cpython":
        _notice(f"{sys.implementation.name} is not CPython: pure build")
        return []
    if not BUILDS.intersection(sys.argv):
        # metadata, an sdist, or an editable install (which runs the .py files; make compiled
        # builds in place): nothing to compile
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _notice("Cython is not installed: pure build")
        return []
    if not _compiler_works():
        _notice("no working C compiler (or Python headers): pure build")
        return []
    sources = _stage()
    # stripped: the symbols would make the wheel several times larger and nobody debugs the C; a
    # profiler (callgrind, perf) needs them to name the engine's functions: CEFISIM_KEEP_SYMBOLS=1
    strip = sys.platform.startswith("linux") and not os.environ.get("CEFISIM_KEEP_SYMBOLS")
    link = ["-s"] if strip else []
    # no debug information where the symbols are stripped anyway: gcc spends a third of its time on it
    compile_args = ["-g0"] if strip else []
    exts = [
        Extension(
            _module_name(src), [str(src.relative_to(ROOT))], extra_compile_args=compile_args, extra_link_args=link
        )
        for src in sources
    ]
    _notice(f"compiling {len(exts)} engine modules with Cython, then C: compiled build")
    # quiet=False: Cython prints "[n/N] Cythonizing ..." as it translates each module
    return cythonize(
        exts,
        compiler_directives=DIRECTIVES,
        include_path=[str(STAGE)],
        quiet=False,
        nthreads=os.cpu_count() or 1,
    )


EXTENSIONS = extensions()
# one compiler per core: the engine's thirty modules take minutes of C compilation one at a time
setup(
    ext_modules=EXTENSIONS,
    cmdclass={"build_ext": ProgressBuildExt} if EXTENSIONS else {},
    options={"build_ext": {"parallel": os.cpu_count() or 1}} if EXTENSIONS else {},
)
