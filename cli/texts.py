"""Every word the command line shows comes from the message table: our commands' and
options' help (keys `help.*`), and click's own words (`usage.*`: "Usage:", "Error: No
such option", "Show this message and exit."), which click takes from `gettext`.

The help texts are looked up when they are shown, not when a module is imported: the
warm server imports these modules once, and each call it serves has its own language.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from swifty_sandbox.messages import MESSAGES, language
from swifty_sandbox.messages.usage import CLICK

F = TypeVar("F", bound=Callable[..., Any])


def text(key: str) -> str:
    """The message `key` in the user's language, its placeholders left for the caller
    (click fills `{message}` and `%(prog)s` itself)."""
    return MESSAGES[key][language()]


def _gettext(message: str) -> str:
    key = CLICK.get(message)
    return text(key) if key is not None else message


def _ngettext(singular: str, plural: str, n: int) -> str:
    return _gettext(singular if n == 1 else plural)


def install() -> None:
    """click asks `gettext` for each of its words, with no catalogue to hand it but
    compiled .mo files; its modules' `_` and `ngettext` are pointed at the table
    instead (looked up at each call, so the call's language)."""
    from click import core, decorators, exceptions, formatting, parser, types

    for module in (core, decorators, exceptions, formatting, parser, types):
        if hasattr(module, "_"):
            module._ = _gettext  # type: ignore[attr-defined]
        if hasattr(module, "ngettext"):
            module.ngettext = _ngettext  # type: ignore[attr-defined]


class _FromTable:
    """An attribute click sets from its arguments (`help=`, `metavar=`, …) and reads when
    it shows it: read, the table's text for the key `key_of(self)` gives (None: no
    text), in the call's language; set, ignored — the table is the text."""

    def __init__(self, key_of: Callable[[Any], str | None]) -> None:
        self.key_of = key_of

    def __get__(self, owner: object, kind: type | None = None) -> Any:
        if owner is None:
            return self
        key = self.key_of(owner)
        return text(key) if key is not None else None

    def __set__(self, owner: object, value: object) -> None:
        pass


class TableOption(click.Option):
    """An option whose help (and placeholder) is a key of the table."""

    help = _FromTable(lambda option: option.help_key)
    metavar = _FromTable(lambda option: option.metavar_key)

    def __init__(self, *decls: Any, help_key: str, metavar_key: str | None = None,
                 **attrs: Any) -> None:
        self.help_key, self.metavar_key = help_key, metavar_key
        super().__init__(*decls, **attrs)


class TableArgument(click.Argument):
    """An argument whose placeholder (`[ARGS]...`) is a key of the table."""

    metavar = _FromTable(lambda argument: argument.metavar_key)

    def __init__(self, *decls: Any, metavar_key: str, **attrs: Any) -> None:
        self.metavar_key = metavar_key
        super().__init__(*decls, **attrs)


class _Table:
    """What our commands and groups share: help and `[OPTIONS]` from the table."""

    help_key: str
    help = _FromTable(lambda command: command.help_key)
    short_help = _FromTable(lambda command: None)  # made from `help`, in the call's language
    options_metavar = _FromTable(lambda command: "usage.options_metavar")


class TableCommand(_Table, click.Command):
    def __init__(self, *args: Any, help_key: str, **attrs: Any) -> None:
        self.help_key = help_key
        super().__init__(*args, **attrs)


class TableGroup(_Table, click.Group):
    command_class = TableCommand
    subcommand_metavar = _FromTable(lambda group: "help.meta.command_word")

    def __init__(self, *args: Any, help_key: str, **attrs: Any) -> None:
        self.help_key = help_key
        super().__init__(*args, **attrs)


class Seconds(click.FloatRange):
    """A positive number of seconds; named in the call's language in its errors
    (click's number types name themselves in English: "float range")."""

    name = _FromTable(lambda seconds: "usage.number")

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True)


def command(name: str | None = None, *, help: str, **attrs: Any) -> Callable[[F], Any]:
    """`click.command` with its help the table's `help` key."""
    return click.command(name, cls=TableCommand, help_key=help, **attrs)


def option(*decls: str, help: str, metavar: str | None = None, **attrs: Any
           ) -> Callable[[F], F]:
    """`click.option` with its help (and placeholder) the table's keys."""
    return click.option(*decls, cls=TableOption, help_key=help, metavar_key=metavar,
                        **attrs)


def argument(*decls: str, metavar: str, **attrs: Any) -> Callable[[F], F]:
    """`click.argument` with its placeholder the table's key."""
    return click.argument(*decls, cls=TableArgument, metavar_key=metavar, **attrs)
