"""Commands of the ``zarrkit`` command line: serve.

>>> from click.testing import CliRunner
>>> "--port" in CliRunner().invoke(main, ["serve", "--help"]).output
True
"""

from __future__ import annotations

import click

from zarrkit.cli.app import CommandFailed, StoreArgument, main, reports_errors
from zarrkit.storage.base import Store


@main.command()
@click.argument("store", type=StoreArgument(mode="r"))
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface).")
@reports_errors
def serve(store: Store, port: int, host: str) -> None:
    """Serve STORE read-only over HTTP, with a web viewer at the same URL.

    zarr-python, tensorstore and zarrkit read the store from the printed URL; consolidated
    metadata is made on the fly where the store has none. Ctrl-C stops the server.
    """
    from zarrkit.server import serve_forever

    def ready(url: str) -> None:
        click.echo(f"Serving {store!r} at {url} (viewer at the same URL; Ctrl-C stops)",
                   nl=True)

    try:
        serve_forever(store, host=host, port=port, on_ready=ready)
    except OSError as e:
        raise CommandFailed(f"cannot listen on {host}:{port}: {e.strerror or e}") from e
