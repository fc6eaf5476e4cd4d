"""What an optional dependency's absence says: one line naming the extra that brings it.

cefisim's optional features live behind extras (``pyproject.toml``): ``[plot]`` (matplotlib),
``[dask]`` (dask.distributed), ``[gym]`` (gymnasium, with numpy), ``[fast]`` (uvloop, the event loop
``cefisim serve --loop uvloop`` runs on). Every place that imports one of
them catches the ``ModuleNotFoundError`` and raises :class:`MissingExtra` from :func:`missing_extra`
instead, so a user without the extra reads
``cefisim.gym needs gymnasium: pip install 'cefisim[gym]'`` rather than a bare traceback ending in
``No module named 'gymnasium'``.

Contract: :func:`missing_extra` re-raises nothing itself; it returns the exception to raise (``raise
missing_extra(exc, ...) from None``), so the import statements stay where they are and keep their
types. An error for a module the extra does not bring (a broken installation of something else) is
returned unchanged: hiding it behind an install hint would send the user the wrong way.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "MissingExtra", "install_hint", "missing_extra"]

#: extra -> the top-level modules it brings (what a ModuleNotFoundError may name)
EXTRAS: dict[str, tuple[str, ...]] = {
    "plot": ("matplotlib",),
    "dask": ("dask", "distributed"),
    "gym": ("gymnasium", "numpy"),
    "fast": ("uvloop",),
}


class MissingExtra(ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra to install."""


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'cefisim[plot]'``."""
    return f"pip install 'cefisim[{extra}]'"


def missing_extra(exc: ModuleNotFoundError, extra: str, feature: str) -> ModuleNotFoundError:
    """The error to raise for ``exc``: a :class:`MissingExtra` when ``exc`` is about a module of
    ``extra`` (``feature needs MODULE: pip install 'cefisim[extra]'``), else ``exc`` itself."""
    top = (exc.name or "").partition(".")[0]
    if top not in EXTRAS[extra]:
        return exc
    return MissingExtra(f"{feature} needs {top}: {install_hint(extra)}", name=exc.name)
