"""The ``zarrkit`` command group and what every command shares: opening a store argument,
reporting errors as one line, choosing plain or rich output.

Commands live in their own modules (:mod:`zarrkit.cli.inspect`, :mod:`zarrkit.cli.copy`,
:mod:`zarrkit.cli.serve`) and attach themselves to :data:`main`.

>>> from click.testing import CliRunner
>>> CliRunner().invoke(main, ["--help"]).exit_code
0
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from zarrkit.errors import ZarrkitError
from zarrkit.storage.base import Store

# Exit statuses: click already exits 2 for usage errors.
EXIT_FAILURE = 1
EXIT_USAGE = 2

F = TypeVar("F", bound=Callable[..., Any])


class CommandFailed(click.ClickException):
    """A failure reported as one line and exit status 1 (usage errors are click's, status 2).

    >>> CommandFailed("no node at 'x'").exit_code
    1
    """

    exit_code = EXIT_FAILURE

    def show(self, file: Any = None) -> None:
        click.echo(f"zarrkit: error: {self.format_message()}", err=True)


def reports_errors(command: F) -> F:
    """Turn library errors raised by ``command`` into one-line failures (exit status 1);
    with ``--debug`` the traceback is shown instead.

    >>> @reports_errors
    ... def boom() -> None:
    ...     raise KeyError("x")
    >>> boom()
    Traceback (most recent call last):
    zarrkit.cli.app.CommandFailed: x
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        context = click.get_current_context(silent=True)
        debug = bool(context and context.find_root().params.get("debug"))
        try:
            return command(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except (ZarrkitError, OSError, KeyError, ValueError, TypeError, ImportError) as e:
            if debug:
                raise
            message = e.args[0] if isinstance(e, KeyError) and e.args else e
            raise CommandFailed(str(message) or type(e).__name__) from e

    return run  # type: ignore[return-value]


def open_store(text: str, mode: str = "r") -> Store:
    """The store a STORE argument names (every store-like form of
    :func:`zarrkit.storage.resolve.make_store`: a directory, ``*.zip``, a URL...).

    With ``mode="r"`` or ``"r+"`` a local path that does not exist is a failure (exit
    status 1), never created; a store that cannot be opened is one line too.

    >>> open_store("memory://cli-doc", mode="w")
    MemoryStore(<0 keys>)
    >>> open_store("/no/such/data.zarr")
    Traceback (most recent call last):
    zarrkit.cli.app.CommandFailed: no such store: '/no/such/data.zarr'
    """
    from zarrkit.storage.resolve import make_store

    is_url = "://" in text and not text.startswith("file://")
    if mode in ("r", "r+") and not is_url and not os.path.exists(text.removeprefix("file://")):
        raise CommandFailed(f"no such store: {text!r}")
    try:
        return make_store(text, mode=mode)
    except (ZarrkitError, OSError, ValueError, TypeError, ImportError) as e:
        raise CommandFailed(f"cannot open store {text!r}: {e}") from e


class StoreArgument(click.ParamType):
    """A click parameter type for a STORE argument: the value is the opened
    :class:`~zarrkit.storage.base.Store` (see :func:`open_store`; ``mode`` is how it opens),
    closed when the command ends (a ZIP store writes its central directory then).

    >>> StoreArgument().convert("memory://cli-doc", None, None)
    MemoryStore(<0 keys>)
    """

    name = "store"

    def __init__(self, mode: str = "r") -> None:
        self.mode = mode

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Store:
        if isinstance(value, Store):
            return value
        store = open_store(str(value), self.mode)
        if ctx is not None:
            ctx.call_on_close(store.close)
        return store


def is_terminal() -> bool:
    """Whether standard output is a terminal (colour and tables) or piped (plain text)."""
    return sys.stdout.isatty()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show the full traceback of an error.")
@click.version_option(package_name="zarrkit", prog_name="zarrkit")
def main(debug: bool) -> None:
    """Inspect, copy, convert, check and serve Zarr stores (v2 and v3).

    STORE arguments take every store-like form: a directory, a ``*.zip`` file or a URL
    (``http://``, ``s3://``, ``memory://``...).
    """
