"""xarray on zarrkit: an xarray backend (``engine="zarrkit"``) and :func:`to_zarrkit`.

Reading follows xarray's own zarr backend (the Zarr encoding of
https://docs.xarray.dev/en/stable/internals/zarr-encoding-spec.html): a group's arrays are
variables, their dimensions are the format-3 ``dimension_names`` or the format-2
``_ARRAY_DIMENSIONS`` attribute (hidden from the attributes), and attributes pass through
to xarray's CF decoding. The array fill value becomes ``_FillValue`` as xarray's zarr
backend makes it: for format 2 by default (``use_zarr_fill_value_as_mask``), a format-3
array's ``_FillValue`` attribute is decoded from its base64 form instead. Every variable
gets the dtype (numpy's ``StringDType`` for variable-length strings), attributes and
``encoding`` that ``engine="zarr"`` gives it (codecs as zarr-python's JSON of them, which
both writers take back). Variables are lazy: nothing but metadata is read until values are
asked for, and then only the chunks the selection touches; ``chunks={}`` gives dask arrays
of one block per chunk (per inner chunk when sharded, as ``engine="zarr"``: ask for the
shards with ``chunks=`` to have one task per shard).

Writing (:func:`to_zarrkit`) encodes the dataset with xarray's own machinery (coordinates
into the ``coordinates`` attributes, CF encoding of times, masks and scales as
``Dataset.to_zarr`` does it, string and fill value handling) and writes what ``to_zarr``
writes, so ``xarray.open_zarr`` reads it back. Its modes are ``to_zarr``'s: create
(``"w-"``, ``"w"``), add or overwrite variables and append along ``append_dim`` (``"a"``,
``"a-"``), write values into existing arrays or a ``region`` of them (``"r+"``).

>>> import numpy as np, xarray as xr
>>> ds = xr.Dataset({"t": (("x",), np.arange(3.0))}, coords={"x": [10, 20, 30]},
...                 attrs={"title": "demo"})
>>> root = to_zarrkit(ds, {})
>>> back = xr.open_dataset(root.store, engine="zarrkit")
>>> xr.testing.assert_identical(back, ds)
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from xarray import coding, conventions
from xarray.backends.common import AbstractDataStore, BackendArray, BackendEntrypoint
from xarray.backends.store import StoreBackendEntrypoint
from xarray.backends.zarr import (
    DIMENSION_KEY,
    FillValueCoder,
    encode_zarr_attr_value,
    encode_zarr_variable,
    extract_zarr_variable_encoding,
)
from xarray.core import indexing
from xarray.core.variable import Variable

from zarrkit.api import consolidate_metadata, open_group
from zarrkit.codecs.public import PublicCodec
from zarrkit.dask import ArraySource, aligned_block_sizes, grid_boundaries
from zarrkit.errors import ContainsNodeError, GroupNotFoundError, NodeNotFoundError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group
from zarrkit.hierarchy.nodes import find_node
from zarrkit.paths import normalize_path
from zarrkit.storage.base import Store
from zarrkit.storage.resolve import make_store

__all__ = ["ZarrkitBackendArray", "ZarrkitBackendEntrypoint", "ZarrkitDataStore", "to_zarrkit"]


def _codec_names(array: Array) -> list[str]:
    """The names of the codecs that turn elements into bytes (and the filters)."""
    if array.zarr_format == 3:
        codecs = [array.serializer, *array.filters]
        return [str(getattr(codec, "name", "")) for codec in codecs]
    return [str(getattr(codec, "codec_id", "")) for codec in array.filters]


def _variable_dtype(array: Array) -> np.dtype[Any]:
    """The dtype xarray sees: variable-length strings and bytes as xarray's vlen dtypes."""
    dtype = array.dtype
    if dtype.kind == "O":
        names = _codec_names(array)
        if "vlen-utf8" in names:
            return coding.strings.create_vlen_dtype(str)
        if "vlen-bytes" in names:
            return coding.strings.create_vlen_dtype(bytes)
    return dtype


def _encoding_codec(codec: Any) -> Any:
    """A codec of an opened array as the ``encoding`` holds it: numcodecs objects (format
    2) as they are, format-3 codecs as the JSON that zarr-python's ``to_dict`` gives, which
    both ``to_zarrkit`` and ``Dataset.to_zarr`` take back (zarrkit's codec objects are not
    zarr-python's, which refuses them)."""
    if isinstance(codec, PublicCodec):
        return codec.to_dict()
    return _codec_json(codec)


def _chunk_sizes(regular: tuple[Any, ...], sizes: tuple[tuple[int, ...], ...]
                 ) -> tuple[Any, ...]:
    """Chunk sizes as xarray's zarr backend gives them: ``regular`` (the chunk shape) for
    a regular grid, else per dimension the length of its chunks where they are all the
    same (the last one may be shorter), the tuple of ``sizes`` (clipped at the edge)
    where they are not.

    >>> _chunk_sizes((2, 3), ((2, 2, 1), (3,)))
    (2, 3)
    >>> _chunk_sizes((2, (1, 2, 4)), ((2, 2, 1), (1, 2, 3)))
    (2, (1, 2, 3))
    """
    if all(isinstance(n, int) for n in regular):
        return tuple(regular)
    compact: list[Any] = []
    for lengths in sizes:
        lengths = tuple(lengths)
        if not lengths:
            compact.append((0,))
        elif len(set(lengths[:-1])) <= 1 and lengths[-1] <= lengths[0]:
            compact.append(lengths[0])
        else:
            compact.append(lengths)
    return tuple(compact)


def _codec_ids(codecs: Any) -> list[str]:
    """The ids (format 2) or names (format 3) of codecs given as objects or JSON.

    >>> _codec_ids([{"id": "vlen-utf8"}, {"name": "zstd", "configuration": {}}])
    ['vlen-utf8', 'zstd']
    """
    if codecs is None or isinstance(codecs, str):
        return []
    ids = []
    for codec in codecs:
        if isinstance(codec, Mapping):
            ids.append(str(codec.get("id", codec.get("name", ""))))
        else:
            ids.append(str(getattr(codec, "codec_id", None) or getattr(codec, "name", "")))
    return ids


def _codec_json(codec: Any) -> Any:
    """A codec in a form that zarrkit and zarr-python both take: the JSON of a format-3
    codec (zarrkit's or zarr-python's), a numcodecs object (or JSON) as it is."""
    if hasattr(codec, "to_json"):  # zarrkit's format-3 codecs
        return codec.to_json()
    if hasattr(codec, "to_dict") and not hasattr(codec, "get_config"):  # zarr-python's
        return codec.to_dict()
    return codec


class ZarrkitBackendArray(BackendArray):
    """A zarrkit array as xarray's lazily indexed backend array: each indexing reads only
    the chunks it touches (basic and orthogonal indexing directly, vectorised indexing by
    coordinates when every key is an integer array, through an orthogonal read otherwise).
    Picklable for dask.distributed (see :class:`zarrkit.dask.ArraySource`).

    >>> import numpy as np, zarrkit as zk
    >>> from xarray.core import indexing
    >>> lazy = ZarrkitBackendArray(zk.from_array({}, data=np.arange(6), chunks=(2,)))
    >>> lazy[indexing.BasicIndexer((slice(1, 4),))]
    array([1, 2, 3])
    >>> lazy[indexing.OuterIndexer((np.array([0, 5]),))]
    array([0, 5])
    """

    def __init__(self, array: Array) -> None:
        self._source = ArraySource(array)
        self.shape: tuple[int, ...] = tuple(array.shape)
        self.dtype: np.dtype[Any] = _variable_dtype(array)

    def get_array(self) -> Array:
        """The zarrkit Array behind this backend array."""
        return self._source.array

    def _basic(self, key: tuple[Any, ...]) -> Any:
        return np.asarray(self._source.array.read(key))

    def _outer(self, key: tuple[Any, ...]) -> Any:
        return np.asarray(self._source.array.oindex[key])

    def _coordinates(self, key: tuple[Any, ...]) -> Any:
        return np.asarray(self._source.array.vindex[key])

    def __getitem__(self, key: indexing.ExplicitIndexer) -> Any:
        if isinstance(key, indexing.BasicIndexer):
            support, method = indexing.IndexingSupport.BASIC, self._basic
        elif isinstance(key, indexing.VectorizedIndexer) and key.tuple and all(
                isinstance(k, np.ndarray) for k in key.tuple):
            support, method = indexing.IndexingSupport.VECTORIZED, self._coordinates
        else:  # outer, or vectorised with slices: an outer read, then numpy
            support, method = indexing.IndexingSupport.OUTER, self._outer
        return indexing.explicit_indexing_adapter(key, self.shape, support, method)


def _dimensions_and_attributes(array: Array) -> tuple[tuple[str, ...], dict[str, Any]]:
    """An array's dimension names and the attributes xarray sees, as xarray's zarr backend
    finds them: format 3's ``dimension_names`` (all attributes shown), format 2's
    ``_ARRAY_DIMENSIONS`` attribute (hidden, with NCZarr's ``_nc*`` attributes)."""
    attributes = array.attrs.asdict()
    names: Any
    if array.zarr_format == 3:
        names = array.metadata.dimension_names
        if names is None and array.ndim and DIMENSION_KEY in attributes:
            names = attributes.pop(DIMENSION_KEY)  # written by a v2-minded tool
        names = tuple(names or ())
    else:
        names = attributes.pop(DIMENSION_KEY, None)
        if names is None and array.ndim:
            raise KeyError(f"array {array.name!r} has no {DIMENSION_KEY!r} attribute, which "
                           f"xarray needs to know its dimensions")
        names = tuple(names or ())
        attributes = {k: v for k, v in attributes.items() if not k.lower().startswith("_nc")}
    if len(names) != array.ndim or not all(isinstance(n, str) for n in names):
        raise KeyError(f"array {array.name!r} has no dimension names for its {array.ndim} "
                       f"dimensions (found {names!r}), which xarray needs")
    return names, attributes


class ZarrkitDataStore(AbstractDataStore):
    """A zarrkit group as an xarray data store (what ``engine="zarrkit"`` reads through).

    ``use_zarr_fill_value_as_mask`` is xarray's: None means True for format 2, False for
    format 3. ``drop_variables`` are not opened at all.

    >>> import numpy as np, zarrkit as zk
    >>> g = zk.group({})
    >>> a = g.create_array("v", shape=(2,), dtype="f8", dimension_names=["x"])
    >>> variables, attrs = ZarrkitDataStore(g).load()
    >>> variables["v"].dims, variables["v"].encoding["chunks"]
    (('x',), (2,))
    """

    def __init__(self, group: Group, *, drop_variables: Iterable[str] = (),
                 use_zarr_fill_value_as_mask: bool | None = None,
                 close_store: bool = False) -> None:
        self.group = group
        self._drop = set(drop_variables)
        if use_zarr_fill_value_as_mask is None:
            use_zarr_fill_value_as_mask = group.zarr_format == 2
        self._use_mask = use_zarr_fill_value_as_mask
        self._close_store = close_store

    @classmethod
    def open(cls, filename_or_obj: Any, *, group: str | None = None,
             consolidated: bool | None = None, storage_options: dict[str, Any] | None = None,
             zarr_format: int | None = None, drop_variables: Iterable[str] = (),
             use_zarr_fill_value_as_mask: bool | None = None) -> ZarrkitDataStore:
        """Open the group at ``group`` (the root by default) of a path, URL, zarrkit store
        or group, read-only; consolidated metadata is used when present.

        >>> import zarrkit as zk
        >>> store = zk.group({}).store
        >>> ZarrkitDataStore.open(store).group.name
        '/'
        """
        if isinstance(filename_or_obj, Group):
            node = filename_or_obj
            if group:
                found = node[group]
                if not isinstance(found, Group):
                    raise NodeNotFoundError(f"no group at {group!r} in {node!r}")
                node = found
            return cls(node, drop_variables=drop_variables,
                       use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
        opened_here = not isinstance(filename_or_obj, (Store, dict))
        node = open_group(filename_or_obj, mode="r", path=group, consolidated=consolidated,
                          zarr_format=zarr_format, storage_options=storage_options)
        return cls(node, drop_variables=drop_variables,
                   use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask,
                   close_store=opened_here)

    def _arrays(self) -> list[tuple[str, Array]]:
        arrays = []
        for name in self.group.array_keys():
            if name in self._drop:
                continue
            array = self.group[name]
            assert isinstance(array, Array)
            arrays.append((name, array))
        return arrays

    def open_store_variable(self, name: str, array: Array) -> Variable:
        """The lazy xarray Variable of one array, with the dtype and the encoding (chunks
        and preferred chunks: the inner chunks; shards; codecs; the numpy dtype of strings;
        format 3's fill value) that xarray's zarr backend gives it.

        >>> import zarrkit as zk
        >>> g = zk.group({})
        >>> a = g.create_array("v", shape=(4,), chunks=(2,), dtype="i2", dimension_names=["x"])
        >>> ZarrkitDataStore(g).open_store_variable("v", a).encoding["preferred_chunks"]
        {'x': 2}
        """
        dimensions, attributes = _dimensions_and_attributes(array)
        wrapper = ZarrkitBackendArray(array)
        data = indexing.LazilyIndexedArray(wrapper)
        chunks = _chunk_sizes(array.chunks, array.read_chunk_sizes)
        encoding: dict[str, Any] = {
            "chunks": chunks,
            # xarray's zarr backend prefers the (inner) chunks, not the shards.
            "preferred_chunks": dict(zip(dimensions, chunks, strict=True)),
        }
        if wrapper.dtype.kind == "T":
            # Keeps numpy's StringDType through xarray's decoding, as engine="zarr" does
            # (without it, Numpy2StringDTypeCoder turns it into objects, dropping the
            # encoding).
            encoding["dtype"] = wrapper.dtype
        shards = array.shards
        encoding.update(
            compressors=tuple(_encoding_codec(codec) for codec in array.compressors),
            filters=tuple(_encoding_codec(codec) for codec in array.filters),
            shards=shards if shards is None else _chunk_sizes(shards,
                                                              array.write_chunk_sizes))
        if array.zarr_format == 3:
            encoding["serializer"] = _encoding_codec(array.serializer)
        if self._use_mask:
            # As xarray's zarr backend: the fill value masks, as netCDF's _FillValue does.
            if array.fill_value is not None:
                attributes["_FillValue"] = array.fill_value
        else:
            if array.zarr_format == 3:
                encoding["fill_value"] = array.fill_value
            if "_FillValue" in attributes:
                dtype: Any = wrapper.dtype
                # xarray passes zarr-python's StringDType here, which its FillValueCoder
                # refuses; the names it has for variable-length types decode instead.
                if dtype.kind == "T" or coding.strings.check_vlen_dtype(dtype) is str:
                    dtype = "string"
                elif coding.strings.check_vlen_dtype(dtype) is bytes:
                    dtype = "bytes"
                attributes["_FillValue"] = FillValueCoder.decode(attributes["_FillValue"],
                                                                 dtype)
        return Variable(dimensions, data, attributes, encoding)

    def get_variables(self) -> dict[str, Variable]:
        """Every array of the group (but the dropped ones) as a lazy Variable."""
        return {name: self.open_store_variable(name, array) for name, array in self._arrays()}

    def get_attrs(self) -> dict[str, Any]:
        """The group's attributes (NCZarr's ``_nc*`` ones hidden)."""
        return {k: v for k, v in self.group.attrs.asdict().items()
                if not k.lower().startswith("_nc")}

    def get_dimensions(self) -> dict[str, int]:
        """Every dimension's length; ValueError if arrays disagree."""
        dimensions: dict[str, int] = {}
        for _, array in self._arrays():
            names, _ = _dimensions_and_attributes(array)
            for dim, size in zip(names, array.shape, strict=True):
                if dimensions.setdefault(dim, size) != size:
                    raise ValueError(f"found conflicting lengths for dimension {dim} "
                                     f"({size} != {dimensions[dim]})")
        return dimensions

    def get_encoding(self) -> dict[str, Any]:
        """The dataset's encoding: its Zarr format."""
        return {"zarr_format": self.group.zarr_format}

    def close(self) -> None:
        """Close the store if this data store opened it."""
        if self._close_store:
            self.group.store.close()


class ZarrkitBackendEntrypoint(BackendEntrypoint):
    """``xr.open_dataset(path_or_url, engine="zarrkit")``: Zarr v2 and v3 groups read
    through zarrkit (paths, URLs with ``storage_options``, zarrkit stores and groups).

    Backend options: ``group``, ``consolidated``, ``storage_options``, ``zarr_format``,
    ``use_zarr_fill_value_as_mask`` (as xarray's zarr backend), ``drop_variables``.

    >>> ZarrkitBackendEntrypoint().guess_can_open("data/ocean.zarr/")
    True
    """

    description = "Open Zarr v2 and v3 groups with zarrkit"
    url = "https://zarr.dev"
    open_dataset_parameters = (
        "filename_or_obj", "mask_and_scale", "decode_times", "concat_characters",
        "decode_coords", "drop_variables", "use_cftime", "decode_timedelta", "group",
        "consolidated", "storage_options", "zarr_format", "use_zarr_fill_value_as_mask",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        """Whether this looks like a Zarr hierarchy: a ``*.zarr`` path or URL, or a
        zarrkit store or group.

        >>> ZarrkitBackendEntrypoint().guess_can_open("data.nc")
        False
        """
        if isinstance(filename_or_obj, (Store, Group)):
            return True
        if isinstance(filename_or_obj, (str, os.PathLike)):
            _, ext = os.path.splitext(str(os.fspath(filename_or_obj)).rstrip("/"))
            return ext == ".zarr"
        return False

    def open_dataset(  # type: ignore[override]
        self,
        filename_or_obj: Any,
        *,
        mask_and_scale: bool = True,
        decode_times: Any = True,
        concat_characters: bool = True,
        decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None,
        use_cftime: bool | None = None,
        decode_timedelta: Any = None,
        group: str | None = None,
        consolidated: bool | None = None,
        storage_options: dict[str, Any] | None = None,
        zarr_format: int | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> xr.Dataset:
        """Open the group as a Dataset of lazy variables, CF-decoded by xarray.

        >>> import numpy as np, xarray as xr, zarrkit as zk
        >>> g = zk.group({}, zarr_format=2)        # format 2: the fill value masks
        >>> a = g.create_array("v", shape=(3,), dtype="f4", fill_value=-1.0,
        ...                    attributes={"_ARRAY_DIMENSIONS": ["x"]})
        >>> a[:2] = 5
        >>> ZarrkitBackendEntrypoint().open_dataset(g.store)["v"].values
        array([ 5.,  5., nan], dtype=float32)
        """
        if isinstance(drop_variables, str):
            drop_variables = [drop_variables]
        datastore = ZarrkitDataStore.open(
            filename_or_obj, group=group, consolidated=consolidated,
            storage_options=storage_options, zarr_format=zarr_format,
            drop_variables=drop_variables or (),
            use_zarr_fill_value_as_mask=use_zarr_fill_value_as_mask)
        try:
            return StoreBackendEntrypoint().open_dataset(
                datastore, mask_and_scale=mask_and_scale, decode_times=decode_times,
                concat_characters=concat_characters, decode_coords=decode_coords,
                drop_variables=drop_variables, use_cftime=use_cftime,
                decode_timedelta=decode_timedelta)
        except BaseException:
            datastore.close()
            raise


def _zarrkit_options(encoding: Mapping[str, Any]) -> dict[str, Any]:
    """zarrkit ``create_array`` options for a variable's zarr encoding (as xarray's
    ``extract_zarr_variable_encoding`` gives it): codecs of zarrkit, numcodecs or
    zarr-python, or their JSON."""
    chunks = encoding.get("chunks")
    options: dict[str, Any] = {"chunks": "auto" if chunks is None else chunks}
    for key in ("shards", "chunk_key_encoding"):
        if encoding.get(key) is not None:
            options[key] = encoding[key]
    for key in ("compressors", "filters"):
        if key in encoding:
            value = encoding[key]
            if value is None or isinstance(value, str):  # None, "auto"
                options[key] = value
            elif isinstance(value, (list, tuple)):
                options[key] = [_codec_json(codec) for codec in value]
            else:
                options[key] = [_codec_json(value)]
    serializer = encoding.get("serializer")
    if serializer is not None and not isinstance(serializer, str):
        options["serializer"] = _codec_json(serializer)
    return options


_WRITE_MODES = ("w", "w-", "a", "a-", "r+")

# What ``Dataset.to_zarr`` compresses a new format-2 array with when the encoding names no
# compressors: zarr-python 3.4's ``Group.create`` (which xarray calls) turns its default
# ``compressor="auto"`` into numcodecs' ``Blosc()``, whose configuration this is (not
# ``create_array``'s Zstd, zarrkit's own default).
_TO_ZARR_V2_COMPRESSOR = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1,
                          "blocksize": 0}


def _choose_mode(mode: str | None, append_dim: Hashable | None, region: Any) -> str:
    """The write mode as ``Dataset.to_zarr`` chooses it (xarray's ``_choose_default_mode``):
    None means ``"a"`` with ``append_dim``, ``"r+"`` with ``region``, ``"w-"`` otherwise.

    >>> _choose_mode(None, "time", None), _choose_mode(None, None, {"x": slice(0, 2)})
    ('a', 'r+')
    >>> _choose_mode("w", "time", None)
    Traceback (most recent call last):
    ValueError: cannot set append_dim unless mode='a', mode='a-' or mode=None
    """
    if append_dim is not None and region is not None:
        raise ValueError(
            "cannot give both append_dim and region: append along append_dim in one call, "
            "write into a region of the existing arrays in another")
    if mode is None:
        mode = "a" if append_dim is not None else "r+" if region is not None else "w-"
    if mode not in _WRITE_MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, _WRITE_MODES))} or None, "
                         f"found {mode!r}")
    if append_dim is not None and mode not in ("a", "a-"):
        raise ValueError("cannot set append_dim unless mode='a', mode='a-' or mode=None")
    if region is not None and mode not in ("a", "a-", "r+"):
        raise ValueError("cannot set region unless mode='a', mode='a-', mode='r+' or mode=None")
    return mode


def to_zarrkit(dataset: xr.Dataset, store: Any, *, zarr_format: int | None = None,
               mode: str | None = None, consolidated: bool = True,
               encoding: Mapping[str, Any] | None = None, group: str | None = None,
               storage_options: dict[str, Any] | None = None,
               append_dim: Hashable | None = None,
               region: Mapping[Any, slice | Literal["auto"]] | Literal["auto"] | None
               = None) -> Group:
    """Write ``dataset`` to the group at ``group`` of ``store`` as ``Dataset.to_zarr`` does,
    through zarrkit; return the group.

    Variables are encoded by xarray's own CF machinery (the one ``to_zarr`` runs: times,
    masks and scales, strings, coordinates into ``coordinates`` attributes); dimension
    names go to ``dimension_names`` (format 3) or ``_ARRAY_DIMENSIONS`` (format 2); fill
    values follow ``to_zarr`` (format 2: ``_FillValue`` is the array's fill value; format 3:
    the ``fill_value`` encoding, NaN for floats, ``_FillValue`` kept as a base64
    attribute). ``encoding`` maps the names of variables new to the store to ``to_zarr``'s
    encoding keys (``chunks``, ``shards``, ``compressors``, ``filters``, ``_FillValue``,
    ``dtype``, ``units``...); giving one for a variable that exists is a ValueError.
    ``zarr_format`` is that of a new group (3 by default); an existing group keeps its own.

    ``mode`` as ``to_zarr``'s:

    - ``"w-"`` creates the group (FileExistsError if a node is there), ``"w"`` replaces it;
    - ``"a"`` writes into the group, creating it if missing: variables new to the store are
      created, existing ones are overwritten (values only, same shape: their metadata and
      encoding stay). With ``append_dim``, variables with that dimension are appended along
      it instead (the array grows and the new values go at its old end);
    - ``"a-"`` is ``"a"`` but, with ``append_dim``, existing variables without that
      dimension are left as they are;
    - ``"r+"`` writes values only: the group and every variable must exist, no metadata
      changes (neither attributes nor consolidated metadata), shapes must match.

    ``mode=None`` (the default) means ``"a"`` with ``append_dim``, ``"r+"`` with ``region``,
    ``"w-"`` otherwise. Values written into existing variables are CF-encoded with the
    stored variable's encoding (time units and calendar, dtype, ``_FillValue``, scale), as
    ``to_zarr`` does.

    ``region`` (modes ``"r+"``, ``"a"``, ``"a-"``) maps dimensions to ``slice(start,
    stop)`` or ``"auto"`` (found from the stored coordinate's values; ``region="auto"`` for
    every dimension): each variable is written into that part of its existing array. Every
    variable must share a dimension with the region (drop the others), the dataset's
    indexes are not written (as ``to_zarr``), and it cannot be combined with
    ``append_dim``.

    Dask-backed variables are written in parallel, one task per block: whole arrays through
    :func:`zarrkit.dask.store`, appended blocks and regions by ``dask.array.store`` into the
    region, blocks first rechunked when they are not aligned with the storage grid (so no
    two tasks share a chunk). ``consolidated`` consolidates the metadata at the end, as
    ``xarray.open_zarr`` expects (not in mode ``"r+"``, which changes no metadata; with
    False an existing consolidated snapshot is left as it was).

    >>> import numpy as np, pandas as pd, xarray as xr
    >>> ds = xr.Dataset({"v": (("time",), [1.0, np.nan])},
    ...                 coords={"time": pd.date_range("2000-01-01", periods=2)})
    >>> g = to_zarrkit(ds, {}, zarr_format=2, encoding={"v": {"_FillValue": -9.0}})
    >>> g["v"][:], g["time"].attrs["units"]
    (array([ 1., -9.]), 'days since 2000-01-01 00:00:00')
    >>> later = ds.assign_coords(time=pd.date_range("2000-01-03", periods=2))
    >>> g = to_zarrkit(later, g.store, append_dim="time")  # encoded as the stored variables
    >>> g["v"][:], g["time"][:], g["time"].attrs["units"]
    (array([ 1., -9.,  1., -9.]), array([0, 1, 2, 3]), 'days since 2000-01-01 00:00:00')
    """
    if not isinstance(dataset, xr.Dataset):
        raise TypeError(f"to_zarrkit writes an xarray Dataset, not {type(dataset).__name__}")
    if zarr_format not in (None, 2, 3):
        raise ValueError(f"zarr_format must be 2 or 3 (or None), found {zarr_format!r}")
    mode = _choose_mode(mode, append_dim, region)
    for name in dataset.variables:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"variable names must be non-empty strings without '/', "
                             f"found {name!r}")
    if mode in ("w", "w-"):
        return _write_new_group(dataset, store, zarr_format=3 if zarr_format is None
                                else zarr_format, mode=mode, consolidated=consolidated,
                                encoding=encoding, group=group,
                                storage_options=storage_options)
    return _write_into_group(dataset, store, zarr_format=zarr_format, mode=mode,
                             consolidated=consolidated, encoding=encoding, group=group,
                             storage_options=storage_options, append_dim=append_dim,
                             region=region)


def _apply_encoding(variables: Mapping[Hashable, Variable],
                    encoding: Mapping[str, Any] | None) -> set[Hashable]:
    """Set the user's encodings on the (already copied) variables; return their names."""
    checked: set[Hashable] = set()
    for name, variable_encoding in (encoding or {}).items():
        if name not in variables:
            raise ValueError(f"encoding given for {name!r}, which is not a variable of the "
                             f"dataset")
        variables[name].encoding = dict(variable_encoding)
        checked.add(name)
    return checked


def _write_new_group(dataset: xr.Dataset, store: Any, *, zarr_format: int, mode: str,
                     consolidated: bool, encoding: Mapping[str, Any] | None,
                     group: str | None, storage_options: dict[str, Any] | None) -> Group:
    """Modes ``"w"`` and ``"w-"``: create the group and every variable."""
    variables, attributes = conventions.encode_dataset_coordinates(dataset)
    checked = _apply_encoding(variables, encoding)
    group_attributes = {k: encode_zarr_attr_value(v) for k, v in attributes.items()}
    root = open_group(store, mode=mode, path=group, zarr_format=zarr_format,
                      attributes=group_attributes, storage_options=storage_options)
    if not group_attributes and zarr_format == 2:
        root.attrs.put({})   # to_zarr writes the group's .zattrs even when it is empty
    writes: list[tuple[Array, tuple[slice, ...], Any]] = []
    for name, variable in variables.items():
        array, values = _create_variable_array(root, str(name), variable,
                                               3 if zarr_format == 3 else 2,
                                               check=name in checked)
        writes.append((array, _whole(array), values))
    _write_values(writes)
    if consolidated:
        consolidate_metadata(root.store, root.path)
    return root


def _write_into_group(dataset: xr.Dataset, store: Any, *, zarr_format: int | None, mode: str,
                      consolidated: bool, encoding: Mapping[str, Any] | None,
                      group: str | None, storage_options: dict[str, Any] | None,
                      append_dim: Hashable | None, region: Any) -> Group:
    """Modes ``"a"``, ``"a-"`` and ``"r+"`` (with ``append_dim`` or ``region``), as xarray's
    ``ZarrStore.store``: everything is checked before anything is written."""
    store_obj = make_store(store, mode="r+" if mode == "r+" else "a",
                           storage_options=storage_options)
    path = normalize_path(group)
    found = find_node(store_obj, path)
    if found is not None and found.kind != "group":
        raise ContainsNodeError(f"an array exists at path {path!r}, not a group")
    if found is None and mode == "r+":
        raise GroupNotFoundError(f"mode 'r+' writes into an existing group, and there is no "
                                 f"group at {path!r} in {store_obj!r}")
    if found is not None and zarr_format is not None and found.zarr_format != zarr_format:
        raise ValueError(f"zarr_format={zarr_format} was given, but the group at {path!r} is "
                         f"a Zarr format {found.zarr_format} group")
    stored_format = found.zarr_format if found is not None else zarr_format or 3
    fmt: Literal[2, 3] = 2 if stored_format == 2 else 3
    root: Group | None = None
    existing: dict[str, Array] = {}
    datastore: ZarrkitDataStore | None = None
    if found is not None:
        # Not from a consolidated snapshot: shapes are read as stored, and resized there.
        root = open_group(store_obj, mode="r+", path=path, zarr_format=fmt, consolidated=False)
        existing = dict(root.arrays())
        datastore = ZarrkitDataStore(root)

    region_slices: dict[Hashable, slice] = {}
    if region is not None:
        region_slices, dataset = _resolve_region(dataset, region, existing, datastore)
    for name in encoding or {}:
        if name in existing:
            raise ValueError(f"variable {name!r} already exists, but encoding was provided")
    variables, attributes = conventions.encode_dataset_coordinates(dataset)
    checked = _apply_encoding(variables, encoding)
    existing_names = [name for name in variables if name in existing]
    new_names = [name for name in variables if name not in existing]
    if mode == "r+" and new_names:
        raise ValueError(f"dataset contains non-pre-existing variables {new_names!r}, which is "
                         f"not allowed with mode='r+'; to allow writing new variables, set "
                         f"mode='a'")
    if region is not None and new_names:
        raise ValueError(f"variables {new_names!r} are not in the store, and a region write "
                         f"cannot create them: write them first (whole, or as a template "
                         f"with to_zarr(compute=False))")
    if append_dim is not None and append_dim not in existing:
        dimensions = datastore.get_dimensions() if datastore is not None else {}
        if append_dim not in dimensions:
            raise ValueError(f"append_dim={append_dim!r} does not match any existing dataset "
                             f"dimensions {dimensions}")

    new_arrays = {str(name): _encode_new_variable(str(name), variables[name], fmt,
                                                  check=name in checked)
                  for name in new_names}
    # Existing variables are encoded exactly as the stored ones: decode those (lazily, no
    # values read) to learn their encoding, and encode the new values with it.
    planned: list[tuple[Array, tuple[slice, ...], Any, tuple[int, ...]]] = []
    if existing_names:
        assert datastore is not None
        stored, _, _ = conventions.decode_cf_variables(
            {name: datastore.open_store_variable(str(name), existing[str(name)])
             for name in existing_names}, {})
        for name in existing_names:
            variable, on_store, array = variables[name], stored[name], existing[str(name)]
            _check_append_dtype(name, on_store, variable)
            variable = variable.copy(deep=False)
            variable.encoding = dict(on_store.encoding)
            encoded = encode_zarr_variable(variable, name=name, zarr_format=fmt)
            encoded = _match_existing_dims(name, encoded, on_store, region_slices, append_dim)
            if mode == "a-" and append_dim is not None and append_dim not in encoded.dims:
                continue   # "a-": only variables along append_dim (and new ones) are written
            target, shape = _target_region(array, encoded, region_slices, append_dim)
            planned.append((array, target, _writable(encoded.data), shape))

    # Now change the store.
    if root is None:
        root = open_group(store_obj, mode="a", path=path, zarr_format=fmt)
    if mode != "r+":
        root.attrs.put({k: encode_zarr_attr_value(v) for k, v in attributes.items()})
    writes: list[tuple[Array, tuple[slice, ...], Any]] = []
    for name, (options, values) in new_arrays.items():
        array = root.create_array(name, **options)
        writes.append((array, _whole(array), values))
    for array, target, values, shape in planned:
        if shape != tuple(array.shape):
            array.resize(shape)
        writes.append((array, target, values))
    _write_values(writes)
    if consolidated and mode != "r+":
        consolidate_metadata(root.store, root.path)
    return root


def _resolve_region(dataset: xr.Dataset, region: Any, existing: Mapping[str, Array],
                    datastore: ZarrkitDataStore | None
                    ) -> tuple[dict[Hashable, slice], xr.Dataset]:
    """``region`` checked as ``to_zarr`` checks it, ``"auto"`` found from the stored
    coordinates; return it and the dataset without its indexes (never written in a region
    write)."""
    if isinstance(region, str):
        if region != "auto":
            raise ValueError(f"region must be a mapping or 'auto', found {region!r}")
        region = dict.fromkeys(dataset.dims, "auto")
    if not isinstance(region, Mapping):
        raise TypeError(f"region must be a dict, got {type(region).__name__}")
    resolved: dict[Hashable, slice] = {}
    for dim, value in region.items():
        if dim not in dataset.dims:
            raise ValueError(f"all keys in region must be dimensions of the dataset, got "
                             f"{list(region)} and {list(dataset.dims)}")
        if isinstance(value, str) and value == "auto":
            value = _auto_region(dataset, dim, existing, datastore)
        if not isinstance(value, slice):
            raise TypeError(f"all values in region must be slice objects or 'auto', got "
                            f"region={region}")
        if value.step not in (1, None):
            raise ValueError(f"step on all slices in region must be 1 or None, got "
                             f"region={region}")
        resolved[dim] = value
    outside = [name for name, variable in dataset.variables.items()
               if not set(resolved).intersection(variable.dims)]
    if resolved and outside:
        raise ValueError(
            f"when setting region, every variable of the dataset must have at least one "
            f"dimension in common with the region's dimensions {list(resolved)}, but "
            f"{outside!r} do not; drop them from the dataset before writing: "
            f".drop_vars({outside!r})")
    return resolved, dataset.drop_vars(list(dataset.indexes))


def _auto_region(dataset: xr.Dataset, dim: Hashable, existing: Mapping[str, Array],
                 datastore: ZarrkitDataStore | None) -> slice:
    """The region of ``dim`` where the dataset's coordinate values sit in the stored
    coordinate (a dimension without coordinate: all of it), as ``to_zarr``'s "auto"."""
    if dim not in dataset.variables:
        return slice(0, dataset.sizes[dim])
    if datastore is None or dim not in existing:
        raise KeyError(f"cannot find the region of {dim!r} automatically: the store has no "
                       f"coordinate {dim!r}")
    stored = conventions.decode_cf_variable(
        str(dim), datastore.open_store_variable(str(dim), existing[str(dim)]).compute())
    if stored.ndim != 1:
        raise ValueError(f"cannot find the region of {dim!r} automatically: the stored "
                         f"coordinate is {stored.ndim}-dimensional")
    positions = pd.Index(stored.values).get_indexer(dataset[dim].values)
    if (positions == -1).any():
        raise KeyError(f"Not all values of coordinate {dim!r} in the new array were found in "
                       f"the original store. Writing to a zarr region slice requires that "
                       f"no dimensions or metadata are changed by the write.")
    if not len(positions):
        return slice(0, 0)
    if (np.diff(positions) != 1).any():
        raise ValueError(f"The auto-detected region of coordinate {dim!r} for writing new "
                         f"data to the original store had non-contiguous indices: a region "
                         f"must be a contiguous subset of the store")
    return slice(int(positions[0]), int(positions[-1]) + 1)


def _check_append_dtype(name: Hashable, on_store: Variable, variable: Variable) -> None:
    """As xarray's ``_validate_datatypes_for_zarr_append``: numbers, times, booleans and
    objects convert; fixed-width strings must match the stored dtype exactly (or go into
    a variable-length string array), or longer strings would be cut."""
    dtype = variable.dtype
    if (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.datetime64)
            or np.issubdtype(dtype, np.bool_) or dtype.kind == "O"
            or (dtype.kind in ("S", "U") and on_store.dtype.kind == "O")):
        return
    if dtype != on_store.dtype:
        raise ValueError(f"Mismatched dtypes for variable {name} between Zarr store on disk "
                         f"and dataset to append. Store has dtype {on_store.dtype} but "
                         f"dataset to append has dtype {dtype}.")


def _match_existing_dims(name: Hashable, encoded: Variable, on_store: Variable,
                         region: Mapping[Hashable, slice], append_dim: Hashable | None
                         ) -> Variable:
    """``encoded`` in the stored variable's dimension order; ValueError unless its sizes are
    the stored ones (the region's along region dimensions; anything along append_dim)."""
    if encoded.dims != on_store.dims:
        if set(encoded.dims) != set(on_store.dims):
            raise ValueError(f"variable {name!r} already exists with different dimension "
                             f"names {on_store.dims} != {encoded.dims}, but changing variable "
                             f"dimensions is not supported")
        encoded = encoded.transpose(*on_store.dims)
    stored_sizes = {}
    for dim, size in on_store.sizes.items():
        if dim in region:
            start, stop, _ = region[dim].indices(size)
            size = max(stop - start, 0)
        if dim != append_dim:
            stored_sizes[dim] = size
    new_sizes = {dim: size for dim, size in encoded.sizes.items() if dim != append_dim}
    if stored_sizes != new_sizes:
        raise ValueError(
            f"variable {name!r} already exists with different dimension sizes: "
            f"{stored_sizes} != {new_sizes}; only the append_dim ({append_dim!r}) may change "
            f"size. To write into a part of the existing variables, use region")
    return encoded


def _target_region(array: Array, encoded: Variable, region: Mapping[Hashable, slice],
                   append_dim: Hashable | None
                   ) -> tuple[tuple[slice, ...], tuple[int, ...]]:
    """Where ``encoded`` goes in ``array`` and the array's shape after the write (grown
    along ``append_dim``)."""
    target = []
    shape = list(array.shape)
    for axis, dim in enumerate(encoded.dims):
        if dim == append_dim:
            target.append(slice(shape[axis], shape[axis] + encoded.shape[axis]))
            shape[axis] += encoded.shape[axis]
        elif dim in region:
            start, stop, _ = region[dim].indices(shape[axis])
            target.append(slice(start, stop))
        else:
            target.append(slice(0, shape[axis]))
    return tuple(target), tuple(shape)


def _whole(array: Array) -> tuple[slice, ...]:
    return tuple(slice(0, size) for size in array.shape)


def _is_dask(data: Any) -> bool:
    return type(data).__module__.startswith("dask.")


def _writable(values: Any) -> Any:
    """Encoded values as zarrkit writes them: numpy's StringDType (zarr-python's format-3
    strings) as objects, zarrkit's variable-length UTF-8."""
    if getattr(values, "dtype", None) is not None and values.dtype.kind == "T":
        return values.astype(object)
    return values


def _region_aligned_chunks(chunks: tuple[tuple[int, ...], ...], array: Array,
                           target: tuple[slice, ...]) -> tuple[tuple[int, ...], ...]:
    """Dask blocks for a write of ``target`` in ``array``: ``chunks`` if each block covers
    whole chunks (shards) of the region, else aligned blocks at least as large (as
    :func:`zarrkit.dask.aligned_chunks` for a whole array). The chunks at the region's ends
    may be partly in it; each is still written by one task."""
    result = []
    for dim_chunks, boundaries, part in zip(chunks, grid_boundaries(array), target,
                                            strict=True):
        start, stop = part.start, part.stop
        cuts = [0, *(b - start for b in boundaries if start < b < stop), stop - start]
        allowed = set(cuts)
        if all(cut in allowed for cut in itertools.accumulate(dim_chunks, initial=0)):
            result.append(tuple(dim_chunks))
            continue
        result.append(aligned_block_sizes(dim_chunks, cuts))
    return tuple(result)


def _store_dask_region(values: Any, array: Array, target: tuple[slice, ...]) -> Any:
    """The delayed write of a dask array into ``array[target]``, one task per block, with
    blocks aligned with the storage grid (rechunked if they were not)."""
    import dask.array as da

    chunks = _region_aligned_chunks(values.chunks, array, target)
    if chunks != tuple(values.chunks):
        values = values.rechunk(chunks)
    target_source: Any = ArraySource(array)
    return da.store(values, target_source, regions=target, lock=False, compute=False,
                    return_stored=False)


def _write_values(writes: Iterable[tuple[Array, tuple[slice, ...], Any]]) -> None:
    """Write each value into its array's region: numpy at once, dask blocks in parallel
    (all the dataset's dask writes in one graph)."""
    delayed = []
    for array, target, values in writes:
        if not math.prod(values.shape):
            continue
        if _is_dask(values):
            from zarrkit.dask import store as store_dask

            whole = all(part.start == 0 and part.stop == size
                        for part, size in zip(target, array.shape, strict=True))
            if whole and tuple(values.shape) == tuple(array.shape):
                delayed.append(store_dask(values, array, compute=False))
            else:
                delayed.append(_store_dask_region(values, array, target))
        else:
            array[target or ...] = np.asarray(values)
    if delayed:
        import dask

        dask.compute(*delayed)


def _encode_new_variable(name: str, variable: Variable, zarr_format: Literal[2, 3], *,
                         check: bool) -> tuple[dict[str, Any], Any]:
    """Encode ``variable`` as ``to_zarr`` does for a new array; return the
    ``create_array`` options of its array and the encoded values to write into it."""
    encoded = encode_zarr_variable(variable, name=name, zarr_format=zarr_format)
    encoded = encoded.copy(deep=False)
    encoded.encoding = dict(encoded.encoding)
    attrs = dict(encoded.attrs)
    dtype: Any = encoded.dtype
    # Fill values as xarray's zarr store sets them (format 2 uses the fill value as the
    # mask, format 3 keeps a base64 _FillValue attribute beside a NaN fill for floats).
    if zarr_format == 2:
        fill_value = attrs.pop("_FillValue", None)
    else:
        fill_value = encoded.encoding.pop("fill_value", None)
        if fill_value is None and dtype.kind == "f":
            fill_value = np.nan
        if "_FillValue" in attrs:
            fv = attrs.pop("_FillValue")
            if fv is not None:
                attrs["_FillValue"] = FillValueCoder.encode(fv, dtype)
    if "_FillValue" in encoded.encoding:
        if encoded.encoding["_FillValue"] is not None:
            raise ValueError("Zarr does not support _FillValue in encoding.")
        del encoded.encoding["_FillValue"]
    zarr_encoding = extract_zarr_variable_encoding(
        encoded, raise_on_invalid=check, name=name, zarr_format=zarr_format)
    attributes = {k: encode_zarr_attr_value(v) for k, v in attrs.items()}
    options = _zarrkit_options(zarr_encoding)
    if zarr_format == 2 and "compressors" not in zarr_encoding:
        options["compressors"] = [dict(_TO_ZARR_V2_COMPRESSOR)]
    if zarr_format == 3:
        # None for a 0-d variable: zarr-python stores no dimension_names for an empty list
        options["dimension_names"] = list(encoded.dims) or None
    else:
        attributes[DIMENSION_KEY] = list(encoded.dims)
    values = _writable(encoded.data)
    if coding.strings.check_vlen_dtype(dtype) is str or dtype.kind == "T":
        dtype = str   # variable-length UTF-8 (numpy's StringDType: zarr-python's v3 strings)
    elif dtype.kind == "U" and "vlen-utf8" in _codec_ids(options.get("filters")):
        # A format-2 string variable read back (StringDType, its vlen-utf8 filter in the
        # encoding): xarray's encoding made it fixed-width, and to_zarr then writes a "<U"
        # array with a vlen-utf8 filter that zarr-python cannot open. Written as the
        # variable-length strings it was read from instead.
        dtype = str
    options.update(shape=encoded.shape, dtype=dtype, fill_value=fill_value,
                   attributes=attributes,
                   write_empty_chunks=zarr_encoding.get("write_empty_chunks"))
    return options, values


def _create_variable_array(root: Group, name: str, variable: Variable,
                           zarr_format: Literal[2, 3], *,
                           check: bool) -> tuple[Array, Any]:
    """Encode ``variable`` as ``to_zarr`` does and create its array in ``root``; return
    the array and the encoded values to write into it."""
    options, values = _encode_new_variable(name, variable, zarr_format, check=check)
    return root.create_array(name, **options), values
