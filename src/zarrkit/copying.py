"""Copying data between hierarchies and stores, with zarr-python 2's functions (zarr-python
3.1 names them but raises NotImplementedError): :func:`copy` (one array or group into a
group), :func:`copy_all` (every member of a group) and :func:`copy_store` (raw keys, no
decoding). Each returns ``(n_copied, n_skipped, n_bytes_copied)``.

>>> import zarrkit as zk
>>> source = zk.group()
>>> _ = source.create_array("a/x", shape=(3,), dtype="i2", fill_value=0)
>>> source["a/x"][:] = [1, 2, 3]
>>> dest = zk.group()
>>> copy_all(source, dest)
(2, 0, 6)
>>> dest["a/x"][:].tolist()
[1, 2, 3]
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from zarrkit.errors import CopyError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group
from zarrkit.paths import normalize_path
from zarrkit.storage.resolve import StoreLike, make_store

__all__ = ["copy", "copy_all", "copy_store"]

_IF_EXISTS = ("raise", "replace", "skip")
_BATCH_KEYS = 64

#: Where progress messages go: nowhere (None), a callable taking each line, a file name
#: (lines are appended) or a writable text stream.
Log = Callable[[str], Any] | str | Path | IO[str] | None


class _LogWriter:
    """Writes each message to the ``log`` a copy function was given, opening a named file
    once for the whole copy."""

    def __init__(self, log: Log) -> None:
        self._file: IO[str] | None = None
        self._write: Callable[[str], Any] | None
        if log is None:
            self._write = None
        elif isinstance(log, str | Path):
            self._file = open(log, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
            self._write = self._file_line
        elif callable(log):
            self._write = log
        elif hasattr(log, "write"):
            stream = log
            self._write = lambda line: stream.write(line + "\n")
        else:
            raise TypeError(f"log must be None, a callable, a file name or a stream, "
                            f"found {log!r}")

    def _file_line(self, line: str) -> None:
        assert self._file is not None
        self._file.write(line + "\n")

    def __call__(self, message: str) -> None:
        if self._write is not None:
            self._write(message)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> _LogWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _check_if_exists(if_exists: str) -> None:
    if if_exists not in _IF_EXISTS:
        raise ValueError(f"if_exists must be one of {list(_IF_EXISTS)}, found {if_exists!r}")


def _log_summary(log: _LogWriter, dry_run: bool, n_copied: int, n_skipped: int,
                 n_bytes_copied: int) -> None:
    message = "dry run: " if dry_run else "all done: "
    message += f"{n_copied:,} copied, {n_skipped:,} skipped"
    if not dry_run:
        message += f", {n_bytes_copied:,} bytes copied"
    log(message)


def _matches(patterns: Sequence[re.Pattern[str]], key: str) -> bool:
    return any(pattern.search(key) for pattern in patterns)


def _patterns(values: str | Sequence[str] | None, flags: int) -> list[re.Pattern[str]]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [re.compile(value, flags) for value in values]


def copy_store(
    source: StoreLike,
    dest: StoreLike,
    source_path: str = "",
    dest_path: str = "",
    excludes: str | Sequence[str] | None = None,
    includes: str | Sequence[str] | None = None,
    flags: int = 0,
    if_exists: str = "raise",
    dry_run: bool = False,
    log: Log = None,
) -> tuple[int, int, int]:
    """Copy the raw keys of ``source`` under ``source_path`` to ``dest`` under
    ``dest_path``, without decoding anything: the fastest copy, keeping every byte.

    ``excludes`` and ``includes`` are regular expressions (searched in each source key,
    with ``flags``): a key that matches an exclude is skipped unless it also matches an
    include. ``if_exists`` says what to do with a key the destination already holds:
    ``"raise"`` (:class:`~zarrkit.errors.CopyError`), ``"skip"`` or ``"replace"``.
    ``dry_run`` writes nothing and counts what would be copied. ``log`` receives a line
    per key. Returns ``(n_copied, n_skipped, n_bytes_copied)``.

    >>> source = {"a/zarr.json": b"{}", "a/c/0": b"xyz", "b/zarr.json": b"{}"}
    >>> dest = {}
    >>> copy_store(source, dest, source_path="a", dest_path="new", log=print)
    copy a/c/0 -> new/c/0
    copy a/zarr.json -> new/zarr.json
    all done: 2 copied, 0 skipped, 5 bytes copied
    (2, 0, 5)
    >>> sorted(dest)
    ['new/c/0', 'new/zarr.json']
    """
    _check_if_exists(if_exists)
    source_store = make_store(source, mode="r")
    dest_store = make_store(dest, mode="a")
    source_prefix = normalize_path(source_path)
    dest_prefix = normalize_path(dest_path)
    source_prefix = source_prefix + "/" if source_prefix else ""
    dest_prefix = dest_prefix + "/" if dest_prefix else ""
    exclude = _patterns(excludes, flags)
    include = _patterns(includes, flags)

    keys = [key for key in sorted(source_store.list_prefix(source_prefix))
            if not (_matches(exclude, key) and not _matches(include, key))]
    n_copied = n_skipped = n_bytes_copied = 0
    with _LogWriter(log) as write_log:
        # In batches, each read with one get_many: remote stores fetch them concurrently,
        # and memory holds one batch of values.
        for start in range(0, len(keys), _BATCH_KEYS):
            batch = keys[start:start + _BATCH_KEYS]
            targets = [dest_prefix + key[len(source_prefix):] for key in batch]
            present = ([None] * len(batch) if if_exists == "replace"
                       else dest_store.get_many(targets))
            wanted = [(key, target) for key, target, there in zip(
                batch, targets, present, strict=True) if there is None]
            values = ([None] * len(wanted) if dry_run
                      else source_store.get_many([key for key, _ in wanted]))
            for key, target, there in zip(batch, targets, present, strict=True):
                described = key if key == target else f"{key} -> {target}"
                if there is not None and if_exists == "raise":
                    raise CopyError(f"key {target!r} exists in destination")
                if there is not None:
                    write_log(f"skip {described}")
                    n_skipped += 1
                else:
                    write_log(f"copy {described}")
                    n_copied += 1
            if not dry_run:
                items = {target: value for (_, target), value in zip(wanted, values, strict=True)
                         if value is not None}  # None: deleted since it was listed
                if items:
                    dest_store.set_many(items)
                n_bytes_copied += sum(len(value) for value in items.values())
        _log_summary(write_log, dry_run, n_copied, n_skipped, n_bytes_copied)
    return n_copied, n_skipped, n_bytes_copied


def copy(
    source: Any,
    dest: Group,
    name: str | None = None,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Log = None,
    if_exists: str = "raise",
    dry_run: bool = False,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy the array or group ``source`` (with everything below it, or only its direct
    members if ``shallow``) into the group ``dest`` as ``name`` (default: the source's
    own name). Data are decoded and encoded again, so the copy can change the format or
    the codecs: ``create_kws`` go to :meth:`Group.create_array` for each array (``chunks``,
    ``compressors``...; by default the source's are kept when the format is the same).

    An existing array in the way is an error (``if_exists="raise"``,
    :class:`~zarrkit.errors.CopyError`), is left alone (``"skip"``) or is replaced
    (``"replace"``); groups merge. ``dry_run`` writes nothing. Returns ``(n_copied,
    n_skipped, n_bytes_copied)``, the bytes counting the decoded data.

    >>> import zarrkit as zk
    >>> source = zk.group()
    >>> a = source.create_array("x", shape=(4,), chunks=(2,), dtype="u1", fill_value=0)
    >>> a[:] = [1, 2, 3, 4]; a.attrs["unit"] = "m"
    >>> dest = zk.group()
    >>> copy(a, dest, name="y", log=print)
    copy /x
    all done: 1 copied, 0 skipped, 4 bytes copied
    (1, 0, 4)
    >>> dest["y"][:].tolist(), dest["y"].attrs["unit"], dest["y"].chunks
    ([1, 2, 3, 4], 'm', (2,))
    """
    _check_if_exists(if_exists)
    if name is None:
        name = str(getattr(source, "name", "") or "").split("/")[-1]
        if not name:
            raise TypeError("source has no name, please provide the `name` parameter to "
                            "indicate a name to copy to")
    with _LogWriter(log) as write_log:
        counts = _copy(write_log, source, dest, name, root=True, shallow=shallow,
                       without_attrs=without_attrs, if_exists=if_exists, dry_run=dry_run,
                       create_kws=create_kws)
        _log_summary(write_log, dry_run, *counts)
    return counts


def copy_all(
    source: Any,
    dest: Group,
    shallow: bool = False,
    without_attrs: bool = False,
    log: Log = None,
    if_exists: str = "raise",
    dry_run: bool = False,
    **create_kws: Any,
) -> tuple[int, int, int]:
    """Copy every member of the group ``source`` into the group ``dest`` (and, unless
    ``without_attrs``, the group's attributes), as :func:`copy` copies one.

    >>> import zarrkit as zk
    >>> source = zk.group(attributes={"title": "t"})
    >>> _ = source.create_group("g"); _ = source.create_array("g/x", shape=(2,), dtype="u1")
    >>> dest = zk.group()
    >>> copy_all(source, dest, shallow=True)
    (1, 0, 0)
    >>> dest.attrs["title"], list(dest["g"].keys())
    ('t', [])
    """
    _check_if_exists(if_exists)
    with _LogWriter(log) as write_log:
        n_copied, n_skipped, n_bytes_copied = _copy_members(
            write_log, source, dest, shallow=shallow, without_attrs=without_attrs,
            if_exists=if_exists, dry_run=dry_run, create_kws=create_kws)
        if not dry_run and not without_attrs:
            dest.attrs.update(dict(source.attrs))
        _log_summary(write_log, dry_run, n_copied, n_skipped, n_bytes_copied)
    return n_copied, n_skipped, n_bytes_copied


def _is_group(node: Any) -> bool:
    # A zarrkit or zarr-python group, or an h5py one: something with members, no shape.
    return isinstance(node, Group) or (hasattr(node, "keys") and not hasattr(node, "shape"))


def _copy(log: _LogWriter, source: Any, dest: Group | None, name: str, *, root: bool,
          shallow: bool, without_attrs: bool, if_exists: str, dry_run: bool,
          create_kws: dict[str, Any]) -> tuple[int, int, int]:
    existing = dest.get(name) if dest is not None else None
    source_name = str(getattr(source, "name", name))
    if not _is_group(source):
        return _copy_array(log, source, dest, name, existing, source_name,
                           without_attrs=without_attrs, if_exists=if_exists, dry_run=dry_run,
                           create_kws=create_kws)

    # A group merges into an existing group; only an array stands in its way.
    blocked = existing is not None and not isinstance(existing, Group)
    if blocked and if_exists == "raise":
        raise CopyError(f"an array {name!r} already exists in destination {dest!r}")
    if blocked and if_exists == "skip":
        log(f"skip {source_name}")
        return 0, 1, 0
    log(f"copy {source_name}")
    group: Group | None = None
    if not dry_run:
        assert dest is not None
        if blocked:
            del dest[name]
        group = dest.require_group(name)
        if not without_attrs:
            group.attrs.update(dict(source.attrs))
    elif isinstance(existing, Group):
        group = existing
    if shallow and not root:
        return 1, 0, 0
    n_copied, n_skipped, n_bytes_copied = _copy_members(
        log, source, group, shallow=shallow, without_attrs=without_attrs,
        if_exists=if_exists, dry_run=dry_run, create_kws=create_kws)
    return n_copied + 1, n_skipped, n_bytes_copied


def _copy_members(log: _LogWriter, source: Any, dest: Group | None, *, shallow: bool,
                  without_attrs: bool, if_exists: str, dry_run: bool,
                  create_kws: dict[str, Any]) -> tuple[int, int, int]:
    """Copy every member of the group ``source`` into ``dest``; the summed counts."""
    totals = [0, 0, 0]
    for key in source.keys():
        counts = _copy(log, source[key], dest, key, root=False, shallow=shallow,
                       without_attrs=without_attrs, if_exists=if_exists, dry_run=dry_run,
                       create_kws=create_kws)
        totals = [total + count for total, count in zip(totals, counts, strict=True)]
    return totals[0], totals[1], totals[2]


def _copy_array(log: _LogWriter, source: Any, dest: Group | None, name: str, existing: Any,
                source_name: str, *, without_attrs: bool, if_exists: str, dry_run: bool,
                create_kws: dict[str, Any]) -> tuple[int, int, int]:
    if existing is not None and if_exists == "raise":
        raise CopyError(f"an object {name!r} already exists in destination {dest!r}")
    if existing is not None and if_exists == "skip":
        log(f"skip {source_name}")
        return 0, 1, 0
    log(f"copy {source_name}")
    if dry_run:
        return 1, 0, 0
    assert dest is not None
    if existing is not None:
        del dest[name]
    target = dest.create_array(name, shape=source.shape, dtype=source.dtype,
                               **_creation_options(source, dest, create_kws))
    # Block by block, so that an array larger than memory can be copied.
    step = target.shards or target.chunks
    if target.ndim == 0:
        target[...] = source[...]
    else:
        starts = [range(0, length, size) for length, size in zip(target.shape, step, strict=True)]
        for corner in itertools.product(*starts):
            region = tuple(slice(start, start + size)
                           for start, size in zip(corner, step, strict=True))
            target[region] = source[region]
    if not without_attrs:
        target.attrs.update(dict(source.attrs))
    return 1, 0, int(target.size) * target.dtype.itemsize


def _creation_options(source: Any, dest: Group, create_kws: dict[str, Any]) -> dict[str, Any]:
    """The source's layout for the new array (chunks, fill value and, within one format,
    its codecs), under whatever the caller gave."""
    options = dict(create_kws)
    chunks = getattr(source, "chunks", None)
    if chunks:
        options.setdefault("chunks", tuple(chunks))
    if hasattr(source, "fill_value"):
        options.setdefault("fill_value", source.fill_value)
    if isinstance(source, Array) and source.zarr_format == dest.zarr_format:
        options.setdefault("compressors", source.compressors)
        options.setdefault("filters", source.filters)
        if source.zarr_format == 3:
            options.setdefault("serializer", source.serializer)
            options.setdefault("shards", source.shards)
            options.setdefault("dimension_names", source.metadata.dimension_names)
    return options
