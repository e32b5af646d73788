"""Commands of the ``zarrkit`` command line that look at a store: ``tree``, ``info``,
``ls``, ``attrs``, ``cat``, ``consolidate``, ``spec dump``/``spec validate``,
``daf describe`` and ``demo``.

Every reading command opens its STORE read-only (:func:`zarrkit.cli.app.open_store`), so a
path that does not exist is reported, never created. A PATH inside the store may pass
through hdmf-zarr links (``zarr_link``), as ``group[path]`` does.

>>> from click.testing import CliRunner
>>> result = CliRunner().invoke(main, ["demo", "--help"])
>>> result.exit_code, "example hierarchy" in result.output
(0, True)
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click
import numpy as np

from zarrkit.cli.app import CommandFailed, StoreArgument, main, open_store, reports_errors
from zarrkit.cli.output import TreeNode, emit_fields, emit_json, emit_table, emit_tree
from zarrkit.errors import MetadataError, NodeNotFoundError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group
from zarrkit.hierarchy.links import Link
from zarrkit.paths import normalize_path
from zarrkit.references import decode_attribute, is_reference_attribute
from zarrkit.storage.base import Store

#: The most elements ``cat`` prints without ``--force``.
MAX_CAT_ELEMENTS = 10_000_000

_JSON_HELP = "Print machine-readable JSON (see the command's help for its shape)."


# --- opening nodes ------------------------------------------------------------------------
def open_node(store: Store, path: str = "") -> Array | Group:
    """The array or group at ``path`` of ``store``, opened read-only; a path that passes
    through a link of a group is followed, as ``group[path]`` follows it.

    >>> import zarrkit as zk
    >>> root = zk.group({}); _ = root.create_array("a/x", shape=(2,), dtype="u1")
    >>> _ = root.create_link("alias", "/a")
    >>> open_node(root.store, "alias/x").path
    'a/x'
    """
    import zarrkit as zk

    path = normalize_path(path)
    try:
        return zk.open(store, mode="r", path=path)
    except NodeNotFoundError:
        if not path:
            raise
        try:
            root = zk.open_group(store, mode="r")
            return root[path]
        except (NodeNotFoundError, MetadataError):
            pass
        raise


def _display_name(node: Array | Group) -> str:
    return "/" + node.path if node.path else "/"


# --- describing nodes ---------------------------------------------------------------------
def codec_names(array: Array) -> list[str]:
    """The names of the codecs that encode the chunks of ``array``, outermost last: format
    3's ``codecs`` (a sharded array's as ``sharding_indexed(inner, ...)``), format 2's
    filters then compressor.

    >>> import zarrkit as zk
    >>> codec_names(zk.create_array({}, shape=(4,), shards=(4,), chunks=(2,), dtype="u1"))
    ['sharding_indexed(bytes, zstd)']
    >>> codec_names(zk.create_array({}, shape=(4,), dtype="u1", zarr_format=2))
    ['zstd']
    """
    document = array.metadata.to_json()
    if array.zarr_format == 2:
        configs = [*(document.get("filters") or []), document.get("compressor")]
        return [str(config["id"]) for config in configs if config]

    def name(codec: dict[str, Any]) -> str:
        inner = (codec.get("configuration") or {}).get("codecs")
        if codec["name"] == "sharding_indexed" and inner:
            return f"{codec['name']}({', '.join(name(c) for c in inner)})"
        return str(codec["name"])

    return [name(codec) for codec in document.get("codecs", [])]


def _tuple_text(values: tuple[int, ...] | None) -> str:
    return "-" if values is None else str(tuple(values))


def _list(values: tuple[int, ...] | None) -> list[int] | None:
    return None if values is None else [int(v) for v in values]


def _members(group: Group) -> list[tuple[str, Array | Group | Link]]:
    """The direct members and the links of ``group``, by name (a link named as a member
    is hidden by it, as lookups resolve the member)."""
    entries: list[tuple[str, Array | Group | Link]] = list(group.members())
    try:
        links = group.links()
    except MetadataError:
        links = {}
    names = {name for name, _ in entries}
    entries += [(name, link) for name, link in links.items() if name not in names]
    return sorted(entries, key=lambda entry: entry[0])


def target_text(source: str, path: str) -> str:
    """How a link or reference target is shown: its path, ``source:path`` when it lies in
    another store (as ``str(Link)`` shows it).

    >>> target_text(".", "/a"), target_text("../other.zarr", "/a")
    ('/a', '../other.zarr:/a')
    """
    link = Link("", source, path)
    return f"{link.source}:{link.path}" if link.external else link.path


def _counts(entries: list[tuple[str, Array | Group | Link]]) -> dict[str, int]:
    return {"arrays": sum(isinstance(n, Array) for _, n in entries),
            "groups": sum(isinstance(n, Group) for _, n in entries),
            "links": sum(isinstance(n, Link) for _, n in entries)}


def _counts_text(counts: dict[str, int]) -> str:
    parts = [f"{n} {kind[:-1] if n == 1 else kind}" for kind, n in counts.items()
             if n or kind != "links"]
    return ", ".join(parts)


def references_of(node: Array | Group) -> dict[str, list[str]]:
    """The object references among the attributes of ``node`` (hdmf-zarr's
    ``{"zarr_dtype": "object", "value": ...}``): attribute name -> target texts
    (``/path``, or ``source:/path`` for another store).

    >>> import zarrkit as zk
    >>> from zarrkit.references import Reference, encode_attribute
    >>> g = zk.group({}, attributes={"device": encode_attribute(Reference("/dev"))})
    >>> references_of(g)
    {'device': ['/dev']}
    """
    try:
        attributes = node.attrs.asdict()
    except MetadataError:
        return {}
    found: dict[str, list[str]] = {}
    for name, value in attributes.items():
        if not is_reference_attribute(value):
            continue
        try:
            decoded = decode_attribute(value)
        except (MetadataError, TypeError):
            continue
        targets = decoded if isinstance(decoded, list) else [decoded]
        found[name] = [target_text(t.source, t.path) for t in targets]
    return found


def array_summary(array: Array) -> dict[str, Any]:
    """What ``tree`` and ``ls`` say of an array, as JSON.

    >>> import zarrkit as zk
    >>> a = zk.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
    >>> s = array_summary(a); s["shape"], s["chunks"], s["shards"], s["dtype"]
    ([4], [2], None, 'uint8')
    """
    return {"kind": "array", "path": array.path, "zarr_format": array.zarr_format,
            "shape": _list(array.shape), "dtype": str(array.dtype),
            "chunks": _list(array.chunks), "shards": _list(array.shards),
            "codecs": codec_names(array)}


def _array_label(name: str, array: Array) -> str:
    label = f"{name} {_tuple_text(array.shape)} {array.dtype} chunks={_tuple_text(array.chunks)}"
    if array.shards is not None:
        label += f" shards={_tuple_text(array.shards)}"
    return label + f" codecs=[{', '.join(codec_names(array))}]"


def _link_json(name: str, link: Link) -> dict[str, Any]:
    return {"kind": "link", "name": name, "source": link.source, "path": link.path,
            "target": target_text(link.source, link.path)}


def _reference_nodes(node: Array | Group, entry: dict[str, Any]) -> list[TreeNode]:
    references = references_of(node)
    if references:
        entry["references"] = references
    return [TreeNode(f"@{name} -> {', '.join(targets)}", style="magenta")
            for name, targets in references.items()]


def _tree(node: Array | Group, name: str, depth: int | None) -> tuple[TreeNode, dict[str, Any]]:
    """The drawing and the JSON of ``node`` and its members down to ``depth`` levels."""
    if isinstance(node, Array):
        entry = {"name": name, **array_summary(node)}
        shown = TreeNode(_array_label(name, node), style="green")
        shown.children += _reference_nodes(node, entry)
        return shown, entry
    entries = _members(node)
    counts = _counts(entries)
    entry = {"name": name, "kind": "group", "path": node.path, "zarr_format": node.zarr_format,
             **counts, "members": None}
    shown = TreeNode(f"{name} ({_counts_text(counts)})", style="bold blue")
    shown.children += _reference_nodes(node, entry)
    if depth is not None and depth <= 0:
        return shown, entry
    entry["members"] = []
    for child_name, child in entries:
        if isinstance(child, Link):
            entry["members"].append(_link_json(child_name, child))
            shown.children.append(TreeNode(str(child), style="cyan"))
            continue
        child_shown, child_entry = _tree(child, child_name,
                                         None if depth is None else depth - 1)
        entry["members"].append(child_entry)
        shown.children.append(child_shown)
    return shown, entry


# --- tree, ls, info, attrs ----------------------------------------------------------------
store_argument = click.argument("store", type=StoreArgument("r"))
path_argument = click.argument("path", default="", required=False)
json_option = click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)


@main.command()
@store_argument
@path_argument
@click.option("--depth", type=click.IntRange(min=0), default=None,
              help="Levels of members shown below PATH (default: all).")
@json_option
@reports_errors
def tree(store: Store, path: str, depth: int | None, as_json: bool) -> None:
    """The hierarchy at PATH of STORE: arrays with shape, dtype, chunks, shards and codecs;
    groups with their numbers of arrays, groups and links; hdmf-zarr links as
    ``name -> /target`` and object-reference attributes as ``@attr -> /target``.

    \b
    --json prints the node at PATH as an object:
      array: {"name", "kind": "array", "path", "zarr_format", "shape", "dtype",
              "chunks", "shards" (null unless sharded), "codecs" (names)}
      group: {"name", "kind": "group", "path", "zarr_format", "arrays", "groups",
              "links" (direct counts), "members" (a list of such objects, and of
              {"kind": "link", "name", "source", "path", "target"}; null below --depth)}
      either may hold "references": {attribute: [target, ...]}.
    """
    node = open_node(store, path)
    shown, entry = _tree(node, _display_name(node), depth)
    if as_json:
        emit_json(entry)
    else:
        emit_tree(shown)


@main.command()
@store_argument
@path_argument
@json_option
@reports_errors
def ls(store: Store, path: str, as_json: bool) -> None:
    """The members directly under PATH of STORE (a group): name, kind, shape, dtype.

    \b
    --json prints a list of objects:
      {"name", "kind": "array" | "group" | "link", "path", "shape", "dtype"}
    (shape and dtype null but for arrays; a link also has "source" and "target").
    """
    node = open_node(store, path)
    if not isinstance(node, Group):
        raise CommandFailed(f"{_display_name(node)} is an array, not a group")
    listed: list[dict[str, Any]] = []
    for name, child in _members(node):
        if isinstance(child, Link):
            listed.append({**_link_json(name, child), "shape": None, "dtype": None})
        elif isinstance(child, Array):
            listed.append({"name": name, "kind": "array", "path": child.path,
                           "shape": _list(child.shape), "dtype": str(child.dtype)})
        else:
            listed.append({"name": name, "kind": "group", "path": child.path,
                           "shape": None, "dtype": None})
    if as_json:
        emit_json(listed)
        return
    rows = [[item["name"], item["kind"],
             _tuple_text(tuple(item["shape"])) if item["shape"] is not None else "",
             item["dtype"] or (f"-> {item['target']}" if item["kind"] == "link" else "")]
            for item in listed]
    emit_table(["name", "kind", "shape", "dtype"], rows)


def _array_info(array: Array) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    # What is stored needs a listing: a store without one (HTTP) shows the metadata only.
    listable = array.store.supports_listing
    summary = array.info_complete() if listable else array.info
    rows = [("Name", _display_name(array)), *summary.items()]
    stored = int(array.nbytes_stored) if listable else None
    initialized = int(array.nchunks_initialized) if listable else None
    shards = array._nshards_initialized if listable and array.shards is not None else None
    metadata = {k: v for k, v in array.metadata.to_json().items() if k != "attributes"}
    entry = {"name": _display_name(array), **array_summary(array),
             "order": array.order, "read_only": array.read_only,
             "fill_value": metadata["fill_value"],
             "nbytes": int(array.nbytes), "nbytes_stored": stored,
             "storage_ratio": array.nbytes / stored if stored else None,
             # As zarr-python counts them: inner chunks of the shards stored.
             "chunks_initialized": initialized,
             "shards_initialized": shards,
             "info": dict(rows), "metadata": metadata,
             "attributes": array.attrs.asdict()}
    return rows, entry


def _group_info(group: Group) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    rows = [("Name", _display_name(group)), *group.info_complete().items()[1:]]
    entries = _members(group)
    counts = _counts(entries)
    entry = {"name": _display_name(group), "kind": "group", "path": group.path,
             "zarr_format": group.zarr_format, "read_only": group.read_only,
             **counts,
             "link_targets": {n: target_text(e.source, e.path) for n, e in entries
                              if isinstance(e, Link)},
             "info": dict(rows), "attributes": group.attrs.asdict()}
    rows = [*rows, ("Direct members", _counts_text(counts))]
    return rows, entry


@main.command()
@store_argument
@click.argument("path")
@json_option
@reports_errors
def info(store: Store, path: str, as_json: bool) -> None:
    """Everything about the node at PATH of STORE ("" or / for the root): for an array the
    rows of ``Array.info_complete()`` (stored size, storage ratio, chunks initialized...),
    for a group its format and member counts; then the attributes.

    \b
    --json prints an object:
      array: {"name", "kind": "array", "path", "zarr_format", "shape", "dtype", "chunks",
              "shards", "codecs", "order", "read_only", "fill_value" (as stored),
              "nbytes", "nbytes_stored", "storage_ratio" (null when nothing is stored),
              "chunks_initialized" (null when sharded), "shards_initialized" (null
              unless sharded) (these three are null when the store cannot list: HTTP),
              "info" ({label: value} as printed), "metadata" (the metadata document,
              attributes left out), "attributes"}
      group: {"name", "kind": "group", "path", "zarr_format", "read_only", "arrays",
              "groups", "links" (direct counts), "link_targets" ({name: target}),
              "info" ({label: value}; counts there are of the whole tree), "attributes"}
    """
    node = open_node(store, path)
    rows, entry = _array_info(node) if isinstance(node, Array) else _group_info(node)
    if as_json:
        emit_json(entry)
        return
    emit_fields(rows)
    if entry["attributes"]:
        click.echo()
        click.echo("Attributes:")
        emit_json(entry["attributes"])


@main.command()
@store_argument
@path_argument
@click.option("--json", "as_json", is_flag=True,
              help="Accepted for symmetry: attrs always prints JSON.")
@reports_errors
def attrs(store: Store, path: str, as_json: bool) -> None:
    """The attributes of the node at PATH of STORE, as a JSON object (coloured on a
    terminal, plain indented JSON when piped)."""
    emit_json(open_node(store, path).attrs.asdict())


# --- cat --------------------------------------------------------------------------------
def parse_selection(text: str) -> tuple[Any, ...]:
    """A numpy basic-indexing selection from its text: comma-separated integers
    (negative from the end), slices ``start:stop:step`` (any part may be left out) and
    at most one ``...``; brackets around it are allowed. ValueError for anything else.

    >>> parse_selection("0:10, 5")
    (slice(0, 10, None), 5)
    >>> parse_selection("[..., ::-2]")
    (Ellipsis, slice(None, None, -2))
    >>> parse_selection("")
    ()
    >>> parse_selection("1.5")
    Traceback (most recent call last):
    ValueError: not an index: '1.5'
    """
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    if not text:
        return ()
    items: list[Any] = []
    for part in (p.strip() for p in text.split(",")):
        if part == "...":
            items.append(Ellipsis)
            continue
        bits = part.split(":")
        try:
            if len(bits) > 3:
                raise ValueError
            numbers = [int(bit) if bit.strip() else None for bit in bits]
        except ValueError:
            raise ValueError(f"not an index: {part!r}") from None
        if len(numbers) == 1:
            if numbers[0] is None:
                raise ValueError(f"not an index: {part!r}")
            items.append(numbers[0])
            continue
        if len(numbers) == 3 and numbers[2] == 0:
            raise ValueError(f"a slice step cannot be zero: {part!r}")
        items.append(slice(*numbers))
    if items.count(Ellipsis) > 1:
        raise ValueError("a selection can hold only one '...'")
    return tuple(items)


def selection_size(selection: tuple[Any, ...], shape: tuple[int, ...]) -> int:
    """The number of elements ``selection`` picks from an array of ``shape``, computed
    without allocating it; IndexError as numpy raises it for a selection out of bounds.

    >>> selection_size((slice(None, None, 3), 0), (10, 4))
    4
    >>> selection_size((10,), (10,))
    Traceback (most recent call last):
    IndexError: index 10 is out of bounds for axis 0 with size 10
    """
    return int(np.broadcast_to(np.empty((), dtype=np.uint8), shape)[selection].size)


class _SelectionText(click.ParamType):
    name = "selection"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[Any, ...]:
        if isinstance(value, tuple):
            return value
        try:
            return parse_selection(str(value))
        except ValueError as e:
            self.fail(str(e), param, ctx)


@main.command()
@store_argument
@click.argument("path")
@click.option("--slice", "selection", type=_SelectionText(), default="",
              help='A numpy basic selection, e.g. "0:10,5" or "...,::-2" (default: all).')
@click.option("--force", is_flag=True,
              help=f"Print even more than {MAX_CAT_ELEMENTS:,} elements.")
@reports_errors
def cat(store: Store, path: str, selection: tuple[Any, ...], force: bool) -> None:
    """The values of the array at PATH of STORE (or of a selection), printed as numpy
    prints them (``print(values)``), in full: no ``...`` summary."""
    node = open_node(store, path)
    if not isinstance(node, Array):
        raise CommandFailed(f"{_display_name(node)} is a group, not an array")
    try:
        size = selection_size(selection, node.shape)
    except IndexError as e:
        raise click.BadParameter(f"{e} (shape {node.shape})", param_hint="'--slice'") from e
    if size > MAX_CAT_ELEMENTS and not force:
        raise CommandFailed(f"the selection holds {size:,} elements, more than "
                            f"{MAX_CAT_ELEMENTS:,}: narrow it with --slice, or add --force")
    values = node[selection]
    with np.printoptions(threshold=sys.maxsize):
        click.echo(str(values))


# --- consolidate, spec --------------------------------------------------------------------
@main.command()
@click.argument("store", type=StoreArgument("r+"))
@path_argument
@reports_errors
def consolidate(store: Store, path: str) -> None:
    """Write consolidated metadata for the group at PATH of STORE (format 2: a
    ``.zmetadata`` document; format 3: inline in the group's ``zarr.json``)."""
    import zarrkit as zk

    group = zk.consolidate_metadata(store, normalize_path(path))
    count = len(group.members(max_depth=None))
    key = ".zmetadata" if group.zarr_format == 2 else "zarr.json"
    where = f"{group.path}/{key}" if group.path else key
    click.echo(f"consolidated the metadata of {count} node{'s' * (count != 1)} "
               f"below {_display_name(group)} into {where}")


@main.group()
def spec() -> None:
    """ZEP 6 object models: a hierarchy's structure as a JSON spec."""


@spec.command("dump")
@store_argument
@path_argument
@click.option("--depth", type=int, default=-1,
              help="Levels of members to include (default -1: all).")
@reports_errors
def spec_dump(store: Store, path: str, depth: int) -> None:
    """The spec (``zarrkit.models``' GroupSpec or ArraySpec JSON) of the node at PATH of
    STORE and everything below it."""
    from zarrkit import models

    node = open_node(store, path)
    module = models.v3 if node.zarr_format == 3 else models.v2
    if isinstance(node, Array):
        emit_json(module.ArraySpec.from_array(node).to_json())
    else:
        emit_json(module.GroupSpec.from_store(node, depth=depth).to_json())


@spec.command("validate")
@store_argument
@click.argument("spec_file", metavar="SPEC.json", type=click.File("rb"))
@click.option("--path", default="", help="The node of STORE the spec describes (default: root).")
@click.option("--closed", is_flag=True, help="Members the spec does not list are violations.")
@reports_errors
def spec_validate(store: Store, spec_file: Any, path: str, closed: bool) -> None:
    """Check STORE against the spec in SPEC.json: exit status 0 when it conforms, else 1
    with every violation on a line of its own (``/path: kind: message``)."""
    from zarrkit.models import validate

    try:
        document = json.loads(spec_file.read())
    except ValueError as e:
        raise CommandFailed(f"{spec_file.name}: not JSON: {e}") from e
    violations = validate(store, document, path=path, closed=closed)
    if not violations:
        click.echo("valid")
        return
    for violation in violations:
        click.echo(str(violation))
    raise click.exceptions.Exit(1)


# --- daf ----------------------------------------------------------------------------------
@main.group()
def daf() -> None:
    """Daf (DataAxesFormats) data sets stored in Zarr."""


@daf.command("describe")
@click.argument("path")
@reports_errors
def daf_describe(path: str) -> None:
    """The scalars, axes (with lengths), vectors and matrices (dtype; dense, packed or
    sparse) of the Daf data set at PATH (``x.daf.zarr``, ``x.daf.zarr.zip``,
    ``x.dafs.zarr.zip#/group``, a URL)."""
    from zarrkit import daf as zk_daf

    if "://" not in path:
        open_store(path.split("#", 1)[0], "r")  # a missing path is reported, not created
    with zk_daf.open(path, "r") as dataset:
        click.echo(dataset.description())


# --- demo ---------------------------------------------------------------------------------
def write_demo(directory: str) -> Group:
    """Write the demo hierarchy (format 3) to ``directory``: a smooth 2-D field, a
    sharded 1-D series, a sharded image, attributes and a link.

    >>> import tempfile, os
    >>> root = write_demo(os.path.join(tempfile.mkdtemp(), "demo.zarr"))
    >>> sorted(root.keys()), root["measurements/series"].shards
    (['images', 'measurements'], (500,))
    """
    import zarrkit as zk

    root = zk.open_group(directory, mode="w-", zarr_format=3,
                         attributes={"title": "zarrkit demo", "created_by": "zarrkit demo"})
    y, x = np.mgrid[0:100, 0:200].astype("f4")
    temperature = root.create_array(
        "measurements/temperature", shape=(100, 200), chunks=(25, 50), dtype="f4",
        attributes={"units": "degC", "long_name": "surface temperature"},
        dimension_names=("y", "x"))
    temperature[:] = 15 + 10 * np.sin(x / 30) * np.cos(y / 20)
    series = root.create_array("measurements/series", shape=(1000,), chunks=(100,),
                               shards=(500,), dtype="i4", attributes={"units": "counts"})
    series[:] = np.cumsum(np.arange(1000) % 7, dtype="i4")
    image = root.create_array("images/gradient", shape=(256, 256), chunks=(32, 32),
                              shards=(128, 128), dtype="u1")
    image[:] = (np.add.outer(np.arange(256), np.arange(256)) // 2).astype("u1")
    root.create_link("latest", "/measurements/temperature")
    return root


@main.command()
@click.argument("directory", default="zarrkit-demo.zarr", required=False, metavar="[DIR]")
@reports_errors
def demo(directory: str) -> None:
    """Write a small example hierarchy to DIR (default zarrkit-demo.zarr): a format 3
    group with arrays (two sharded), attributes and a link; then show what to try."""
    if os.path.exists(directory):
        raise CommandFailed(f"{directory!r} exists already: name a new directory")
    write_demo(directory)
    click.echo(f"wrote an example hierarchy to {directory}; try:")
    for command in (f"tree {directory}", f"info {directory} measurements/temperature",
                    f"cat {directory} measurements/series --slice 0:10",
                    f"attrs {directory} measurements/temperature",
                    f"serve {directory}"):
        click.echo(f"  zarrkit {command}")
