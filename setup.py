"""The engine's compiled build: the same ``engine/*.py`` source compiled with Cython (docs/build.md), with
the journal's writer (``api/runtime/journal_file.py`` and ``journal_seal.py``), which runs once per command.

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
#: the modules of api/ compiled with the engine: those with a .pxd beside them (the journal's writer and
#: its records' seals, which a journal runs for every command; docs/build.md)
API = ROOT / "api"
API_COMPILED = sorted(p.relative_to(API).with_suffix("") for p in API.rglob("*.pxd"))
#: the C libraries a compiled module links: zlib, for journal_seal.pxd's seal and the modules that cimport
#: it (its C code is compiled into each)
LIBRARIES = {"cefisim.api.runtime.journal_seal": ["z"], "cefisim.api.runtime.journal_file": ["z"]}
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
        _notice(f"compiled {len(self.extensions)} modules")

    def build_extension(self, ext: Extension) -> None:
        self._done += 1
        _notice(f"[{self._done}/{len(self.extensions)}] compiling {ext.name} (C)")
        super().build_extension(ext)


def _builds(code: str, libraries: list[str]) -> bool:
    """Whether ``code`` compiles with Python's headers and links as a shared object with ``libraries``."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text(code)
        try:
            objects = compiler.compile([str(src)], output_dir=tmp, include_dirs=[sysconfig.get_paths()["include"]])
            compiler.link_shared_object(objects, str(Path(tmp, "probe.so")), libraries=libraries)
        except Exception:  # any failure to compile or link means: not here
            return False
    return True


def _compiler_works() -> bool:
    """Whether a C extension can be built here: a compiler and Python's headers (tried on a tiny file)."""
    return _builds("#include <Python.h>\nint cefisim_probe(void) { return 0; }\n", [])


def _zlib_works() -> bool:
    """Whether zlib's header and library are here too (the journal's seals call its crc32); without
    them the engine is still compiled and the journal's writer stays pure."""
    return _builds(
        "#include <Python.h>\n#include <zlib.h>\nunsigned long cefisim_probe(void) { return crc32(0, Z_NULL, 0); }\n",
        ["z"],
    )


def _stage(api_modules: list[Path]) -> list[Path]:
    """Copy the engine's sources to cefisim/engine/ under the staging folder, and the compiled modules of
    api/ (with their .pxd files) to cefisim/api/; the modules to compile."""
    pkg = STAGE / "cefisim" / "engine"
    if STAGE.exists():
        shutil.rmtree(STAGE)
    pkg.mkdir(parents=True)
    (STAGE / "cefisim" / "__init__.py").write_text("")
    for folder in COMPILED:
        (pkg / folder).mkdir(parents=True, exist_ok=True)
        for src in sorted([*(ENGINE / folder).glob("*.py"), *(ENGINE / folder).glob("*.pxd")]):
            shutil.copy2(src, pkg / folder / src.name)
    sources = [
        pkg / folder / p.name
        for folder in COMPILED
        for p in sorted((ENGINE / folder).glob("*.py"))
        if p.stem not in PURE
    ]
    api = STAGE / "cefisim" / "api"
    for module in api_modules:
        target = api / module
        target.parent.mkdir(parents=True, exist_ok=True)
        folder = target.parent
        while folder != STAGE / "cefisim":  # packages, so Cython names the module by its package path
            (folder / "__init__.py").touch()
            folder = folder.parent
        for suffix in (".py", ".pxd"):
            shutil.copy2((API / module).with_suffix(suffix), target.with_suffix(suffix))
        sources.append(target.with_suffix(".py"))
    return sources


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
    api_modules = API_COMPILED
    if api_modules and not _zlib_works():
        _notice("no zlib header or library: the engine compiled, the journal's writer pure")
        api_modules = []
    sources = _stage(api_modules)
    # stripped: the symbols would make the wheel several times larger and nobody debugs the C; a
    # profiler (callgrind, perf) needs them to name the engine's functions: CEFISIM_KEEP_SYMBOLS=1
    strip = sys.platform.startswith("linux") and not os.environ.get("CEFISIM_KEEP_SYMBOLS")
    link = ["-s"] if strip else []
    # no debug information where the symbols are stripped anyway: gcc spends a third of its time on it
    compile_args = ["-g0"] if strip else []
    exts = [
        Extension(
            _module_name(src),
            [str(src.relative_to(ROOT))],
            libraries=LIBRARIES.get(_module_name(src), []),
            extra_compile_args=compile_args,
            extra_link_args=link,
        )
        for src in sources
    ]
    _notice(f"compiling {len(exts)} modules (the engine, the journal's writer) with Cython, then C: compiled build")
    # quiet=False: Cython prints "[n/N] Cythonizing ..." as it translates each module
    return cythonize(
        exts,
        compiler_directives=DIRECTIVES,
        include_path=[str(STAGE)],
        quiet=False,
        nthreads=os.cpu_count() or 1,
    )


EXTENSIONS = extensions()
# one compiler per core: the thirty-odd modules take minutes of C compilation one at a time
setup(
    ext_modules=EXTENSIONS,
    cmdclass={"build_ext": ProgressBuildExt} if EXTENSIONS else {},
    options={"build_ext": {"parallel": os.cpu_count() or 1}} if EXTENSIONS else {},
)
