"""Commands of the ``zarrkit`` command line that copy and verify: ``cp`` (a hierarchy as it
is, chunk bytes untouched), ``convert`` (to another format, compressor, chunking or
sharding) and ``check`` (every metadata document parses, every chunk decodes).

``cp`` and ``convert`` are resumable: run again after an interruption, they skip what the
destination already holds (see :func:`zarrkit.convert.replicate` and
:func:`zarrkit.convert`). All three show a progress bar with rate and time remaining on
stderr when it is a terminal (``--progress`` forces it, ``--no-progress`` silences it).

>>> from click.testing import CliRunner
>>> result = CliRunner().invoke(main, ["convert", "--help"])
>>> result.exit_code, "--compressor" in result.output
(0, True)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from zarrkit.cli.app import StoreArgument, main, reports_errors
from zarrkit.cli.output import emit_json
from zarrkit.storage.base import Store

F = TypeVar("F", bound=Callable[..., Any])

_JSON_HELP = "Print a machine-readable JSON summary."


# --- parameter types ------------------------------------------------------------------------
class ShapeText(click.ParamType):
    """Positive integers separated by commas (``64,64``), as a tuple; anything else is a
    usage error (exit status 2).

    >>> ShapeText().convert("64, 32", None, None)
    (64, 32)
    >>> ShapeText().convert("64,x", None, None)
    Traceback (most recent call last):
    click.exceptions.BadParameter: '64,x' is not positive integers separated by commas \
(such as 64,64)
    """

    name = "N,N,..."

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[int, ...]:
        if isinstance(value, tuple):
            return value
        try:
            shape = tuple(int(part) for part in str(value).split(","))
        except ValueError:
            shape = ()
        if not shape or any(n <= 0 for n in shape):
            self.fail(f"{value!r} is not positive integers separated by commas "
                      "(such as 64,64)", param, ctx)
        return shape


# Compressors by name: their numcodecs (Zarr v2) configuration at a level.
_COMPRESSORS: dict[str, Callable[[int], dict[str, Any]]] = {
    "zstd": lambda level: {"id": "zstd", "level": level},
    "gzip": lambda level: {"id": "gzip", "level": level},
    "zlib": lambda level: {"id": "zlib", "level": level},
    "lz4": lambda level: {"id": "lz4", "acceleration": level},
}
_BLOSC_CNAMES = ("zstd", "lz4", "lz4hc", "blosclz", "zlib")
_DEFAULT_LEVEL = 5


class CompressorText(click.ParamType):
    """A compressor as text: ``NAME[:LEVEL]`` (zstd, gzip, zlib, lz4),
    ``blosc[:CNAME[:LEVEL]]`` (byte shuffle) or ``none``. The value is the list of
    compressors as numcodecs configurations (empty for ``none``); an unknown one is a
    usage error.

    >>> CompressorText().convert("blosc:zstd:5", None, None)
    [{'id': 'blosc', 'cname': 'zstd', 'clevel': 5, 'shuffle': 1}]
    >>> CompressorText().convert("none", None, None)
    []
    >>> CompressorText().convert("snappy:3", None, None)
    Traceback (most recent call last):
    click.exceptions.BadParameter: unknown compressor 'snappy:3': use zstd[:LEVEL], \
gzip[:LEVEL], zlib[:LEVEL], lz4[:LEVEL], blosc[:CNAME[:LEVEL]] or none
    """

    name = "COMPRESSOR"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> list[dict[str, Any]]:
        if isinstance(value, list):
            return value
        text = str(value).strip().lower()
        if text == "none":
            return []
        name, *rest = text.split(":")
        try:
            if name == "blosc" and len(rest) <= 2 and (not rest or rest[0] in _BLOSC_CNAMES):
                cname = rest[0] if rest else "zstd"
                level = int(rest[1]) if len(rest) == 2 else _DEFAULT_LEVEL
                return [{"id": "blosc", "cname": cname, "clevel": level, "shuffle": 1}]
            if name in _COMPRESSORS and len(rest) <= 1:
                return [_COMPRESSORS[name](int(rest[0]) if rest else _DEFAULT_LEVEL)]
        except ValueError:
            pass
        known = ", ".join(f"{n}[:LEVEL]" for n in _COMPRESSORS)
        self.fail(f"unknown compressor {value!r}: use {known}, blosc[:CNAME[:LEVEL]] or none",
                  param, ctx)


def compressors_for(compressors: list[dict[str, Any]], zarr_format: int) -> list[Any]:
    """The ``compressors`` argument of :func:`zarrkit.convert` for the value of a
    :class:`CompressorText`, in the form ``zarr_format`` stores.

    >>> compressors_for([{"id": "gzip", "level": 6}], 3)
    [{'name': 'gzip', 'configuration': {'level': 6}}]
    >>> compressors_for([], 2)
    []
    """
    if zarr_format == 2:
        return compressors
    from zarrkit.codecs.registry import codec_json_v3

    return [codec_json_v3(dict(c)) for c in compressors]


def progress_option(command: F) -> F:
    """The ``--progress/--no-progress`` option: ``progress`` is True, False or None
    (shown when stderr is a terminal, see :func:`show_progress`)."""
    return click.option(
        "--progress/--no-progress", default=None,
        help="Show a progress bar on stderr (default: when stderr is a terminal).")(command)


def show_progress(progress: bool | None) -> bool:
    """Whether to draw the progress bar: as asked, else when stderr is a terminal.

    >>> show_progress(False)
    False
    """
    return sys.stderr.isatty() if progress is None else progress


# --- commands -------------------------------------------------------------------------------
@main.command()
@click.argument("src", type=StoreArgument("r"))
@click.argument("dst", type=StoreArgument("a"))
@click.argument("src_path", default="", required=False)
@click.option("--path", "dst_path", default=None,
              help="Where to copy to in DST (default: SRC_PATH).")
@click.option("--overwrite", is_flag=True,
              help="Replace a different node at the destination path (deleting it first).")
@progress_option
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@reports_errors
def cp(src: Store, dst: Store, src_path: str, dst_path: str | None, overwrite: bool,
       progress: bool | None, as_json: bool) -> None:
    """Copy the hierarchy at SRC_PATH of SRC to DST as it is (same format, codecs and
    chunks: the bytes of every key, nothing re-encoded).

    Resumable: run again after an interruption, it writes only the keys that DST does not
    hold yet with the same bytes (a finished copy run again writes nothing).

    --json prints {"keys", "written", "skipped", "bytes_written"}.
    """
    from zarrkit.convert import replicate

    with dst:
        report = replicate(src, dst, src_path, dst_path, overwrite=overwrite,
                            progress=show_progress(progress))
    if as_json:
        emit_json(report.to_json())
        return
    click.echo(f"copied {report.written} of {report.keys} keys ({report.bytes_written} bytes); "
               f"{report.skipped} already at the destination")


@main.command()
@click.argument("src", type=StoreArgument("r"))
@click.argument("dst", type=StoreArgument("a"))
@click.option("--zarr-format", type=click.Choice(["2", "3"]), default="3", show_default=True,
              help="The format of the copy.")
@click.option("--compressor", type=CompressorText(), default=None,
              help="zstd[:LEVEL], gzip[:LEVEL], zlib[:LEVEL], lz4[:LEVEL], "
                   "blosc[:CNAME[:LEVEL]] or none (default: the format's default).")
@click.option("--chunks", type=ShapeText(), default=None,
              help="Chunk shape of every array, such as 64,64 (default: kept).")
@click.option("--shards", type=ShapeText(), default=None,
              help="Shard shape of every array, such as 512,512 (Zarr v3 only).")
@click.option("--path", default="", help="The node of SRC to convert (default: the root).")
@click.option("--overwrite", is_flag=True,
              help="Replace nodes of DST that differ (default: refuse).")
@progress_option
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@reports_errors
def convert(src: Store, dst: Store, zarr_format: str, compressor: list[dict[str, Any]] | None,
            chunks: tuple[int, ...] | None, shards: tuple[int, ...] | None, path: str,
            overwrite: bool, progress: bool | None, as_json: bool) -> None:
    """Copy the hierarchy (or array) at --path of SRC into DST, re-encoding every chunk in
    another format, compressor, chunk shape or shard shape.

    Resumable: run again after an interruption, it keeps what DST already holds of the
    same conversion and writes only chunks whose bytes differ (a finished conversion run
    again writes nothing).

    --json prints {"zarr_format", "path", "arrays", "groups"}.
    """
    import zarrkit
    from zarrkit.hierarchy.array import Array

    fmt = int(zarr_format)
    if shards is not None and fmt != 3:
        raise click.BadParameter("sharding needs --zarr-format 3", param_hint="'--shards'")
    compressors = "auto" if compressor is None else compressors_for(compressor, fmt)
    with dst:
        result = zarrkit.convert(src, dst, zarr_format=fmt, path=path,
                                 compressors=compressors, chunks=chunks, shards=shards,
                                 overwrite=overwrite, progress=show_progress(progress))
        if isinstance(result, Array):
            arrays, groups = 1, 0
        else:
            members = [node for _, node in result.members(max_depth=None)]
            arrays = sum(isinstance(node, Array) for node in members)
            groups = 1 + len(members) - arrays
    summary = {"zarr_format": fmt, "path": result.path, "arrays": arrays, "groups": groups}
    if as_json:
        emit_json(summary)
        return
    click.echo(f"converted {arrays} array{'s' * (arrays != 1)} and {groups} "
               f"group{'s' * (groups != 1)} to Zarr v{fmt}")


@main.command()
@click.argument("store", type=StoreArgument("r"))
@click.argument("path", default="", required=False)
@progress_option
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@click.pass_context
@reports_errors
def check(ctx: click.Context, store: Store, path: str, progress: bool | None,
          as_json: bool) -> None:
    """Verify the hierarchy at PATH of STORE: parse every metadata document and decode
    every stored chunk (of a sharded array: the shard index and every inner chunk),
    reporting each corrupt one by key. Exit status 1 if any is corrupt.

    --json prints {"ok", "documents", "arrays", "chunks", "problems": [{"key",
    "inner_chunk" (sharded arrays), "error"}]}.
    """
    from zarrkit.check import check as check_store

    report = check_store(store, path, progress=show_progress(progress))
    if as_json:
        emit_json(report.to_json())
    else:
        for problem in report.problems:
            inner = ("" if problem.inner_chunk is None
                     else f" inner chunk {list(problem.inner_chunk)}")
            click.echo(f"corrupt: {problem.key}{inner}: {problem.error}")
        verdict = "ok" if report.ok else f"{len(report.problems)} corrupt"
        click.echo(f"checked {report.documents} metadata documents and {report.chunks} "
                   f"chunks of {report.arrays} arrays: {verdict}")
    if not report.ok:
        ctx.exit(1)
