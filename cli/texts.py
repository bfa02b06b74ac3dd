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


class TableOption(click.Option):
    """An option whose help (and placeholder) is a key of the table."""

    def __init__(self, *decls: Any, help_key: str, metavar_key: str | None = None,
                 **attrs: Any) -> None:
        self.help_key, self.metavar_key = help_key, metavar_key
        super().__init__(*decls, **attrs)

    @property
    def help(self) -> str | None:
        return text(self.help_key)

    @help.setter
    def help(self, value: str | None) -> None:
        """click sets it from the `help` argument: the table is the text."""

    @property
    def metavar(self) -> str | None:
        return text(self.metavar_key) if self.metavar_key is not None else None

    @metavar.setter
    def metavar(self, value: str | None) -> None:
        """As `help`."""


class TableArgument(click.Argument):
    """An argument whose placeholder (`[ARGS]...`) is a key of the table."""

    def __init__(self, *decls: Any, metavar_key: str, **attrs: Any) -> None:
        self.metavar_key = metavar_key
        super().__init__(*decls, **attrs)

    @property
    def metavar(self) -> str | None:
        return text(self.metavar_key)

    @metavar.setter
    def metavar(self, value: str | None) -> None:
        """As `TableOption.help`."""


class _Table:
    """What our commands and groups share: help and `[OPTIONS]` from the table."""

    help_key: str

    @property
    def help(self) -> str | None:
        return text(self.help_key)

    @help.setter
    def help(self, value: str | None) -> None:
        """As `TableOption.help`."""

    @property
    def short_help(self) -> str | None:
        return None  # made from `help`, in the call's language

    @short_help.setter
    def short_help(self, value: str | None) -> None:
        """As `TableOption.help`."""

    @property
    def options_metavar(self) -> str | None:
        return text("usage.options_metavar")

    @options_metavar.setter
    def options_metavar(self, value: str | None) -> None:
        """As `TableOption.help`."""


class TableCommand(_Table, click.Command):
    def __init__(self, *args: Any, help_key: str, **attrs: Any) -> None:
        self.help_key = help_key
        super().__init__(*args, **attrs)


class TableGroup(_Table, click.Group):
    command_class = TableCommand

    def __init__(self, *args: Any, help_key: str, **attrs: Any) -> None:
        self.help_key = help_key
        super().__init__(*args, **attrs)

    @property
    def subcommand_metavar(self) -> str:
        return text("help.meta.command_word")

    @subcommand_metavar.setter
    def subcommand_metavar(self, value: str) -> None:
        """As `TableOption.help`."""


class Seconds(click.FloatRange):
    """A positive number of seconds; named in the call's language in its errors
    (click's number types name themselves in English: "float range")."""

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True)

    @property
    def name(self) -> str:
        return text("usage.number")

    @name.setter
    def name(self, value: str) -> None:
        """As `TableOption.help`."""


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
