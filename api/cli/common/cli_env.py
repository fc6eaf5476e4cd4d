"""Every option of a command also from an environment variable, as LocalStack does: ``CEFISIM_<DEST>``.

Contract: :func:`env_defaults` walks a parser's actions (so an option added later gets its variable
with no further code): ``--port`` reads ``CEFISIM_PORT``, ``--signature-layout`` reads
``CEFISIM_SIGNATURE_LAYOUT``. A set variable becomes the option's default, converted and checked
exactly as the flag's value would be (its type, its choices), so a flag on the command line wins.
A switch (``store_true``) takes ``1/true/yes/on`` or ``0/false/no/off``; a repeatable option
(``append``) takes its values separated by commas. A bad value is a usage error that names the
variable. Each option's help says which variable it reads, so ``--help`` lists them all.

:func:`examples` is the other thing every command's parser shares: the example commands its
``--help`` ends with (``tests/api/cli/test_cli_help.py`` walks every subcommand's help and runs the
examples' flags through the parser, so an example cannot name a flag that is gone).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

PREFIX = "CEFISIM_"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def examples(*commands: str) -> dict[str, Any]:
    """``ArgumentParser`` keywords for a help that ends with ``commands`` as examples, one a line
    (the description and the examples keep their line breaks)."""
    return {
        "epilog": "examples:\n" + "\n".join(f"  {c}" for c in commands),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def env_name(action: argparse.Action) -> str:
    """The variable an option reads: ``CEFISIM_`` and its destination in capitals."""
    return PREFIX + action.dest.upper()


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if a.option_strings and a.dest not in ("help", "version") and a.help != argparse.SUPPRESS
    ]


def document(parser: argparse.ArgumentParser) -> None:
    """Add ``[env CEFISIM_X]`` to each option's help."""
    for action in _options(parser):
        note = f"[env {env_name(action)}]"
        action.help = f"{action.help} {note}" if action.help else note


class _EnvAppend(argparse._AppendAction):
    """A repeatable option whose default came from the environment: the first flag replaces it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest, None) is self.default:
            setattr(namespace, self.dest, [])
        super().__call__(parser, namespace, values, option_string)


def _convert(action: argparse.Action, text: str) -> Any:
    if isinstance(action, argparse._StoreConstAction):
        word = text.strip().lower()
        if word not in _TRUE + _FALSE:
            raise argparse.ArgumentTypeError(f"expected one of {', '.join(_TRUE + _FALSE[:-1])}")
        return action.const if word in _TRUE else not action.const
    if isinstance(action, argparse._AppendAction):
        return [_one(action, part.strip()) for part in text.split(",") if part.strip()]
    return _one(action, text)


def _one(action: argparse.Action, text: str) -> Any:
    convert = action.type if callable(action.type) else str
    try:
        value = convert(text)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: {exc}") from None
    if action.choices is not None and value not in action.choices:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(map(str, action.choices))}")
    return value


def env_defaults(parser: argparse.ArgumentParser, environ: Mapping[str, str]) -> None:
    """Set each option's default from its variable when set (a bad value: ``parser.error``)."""
    for action in _options(parser):
        name = env_name(action)
        if name not in environ:
            continue
        try:
            action.default = _convert(action, environ[name])
        except argparse.ArgumentTypeError as exc:
            parser.error(f"{name}: {exc}")
        if type(action) is argparse._AppendAction:
            action.__class__ = _EnvAppend
