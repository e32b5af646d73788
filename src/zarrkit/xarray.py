"""xarray on zarrkit: an xarray backend (``engine="zarrkit"``) and :func:`to_zarrkit`.

Reading follows xarray's own zarr backend (the Zarr encoding of
https://docs.xarray.dev/en/stable/internals/zarr-encoding-spec.html): a group's arrays are
variables, their dimensions are the format-3 ``dimension_names`` or the format-2
``_ARRAY_DIMENSIONS`` attribute (hidden from the attributes), and attributes pass through
to xarray's CF decoding. The array fill value becomes ``_FillValue`` as xarray's zarr
backend makes it: for format 2 by default (``use_zarr_fill_value_as_mask``), a format-3
array's ``_FillValue`` attribute is decoded from its base64 form instead. Variables are
lazy: nothing but metadata is read until values are asked for, and then only the chunks
the selection touches; ``chunks={}`` gives dask arrays of one block per chunk (per shard
when sharded).

Writing (:func:`to_zarrkit`) encodes the dataset with xarray's own machinery (coordinates
into the ``coordinates`` attributes, CF encoding of times, masks and scales as
``Dataset.to_zarr`` does it, string and fill value handling) and writes what ``to_zarr``
writes, so ``xarray.open_zarr`` reads it back.

>>> import numpy as np, xarray as xr
>>> ds = xr.Dataset({"t": (("x",), np.arange(3.0))}, coords={"x": [10, 20, 30]},
...                 attrs={"title": "demo"})
>>> root = to_zarrkit(ds, {})
>>> back = xr.open_dataset(root.store, engine="zarrkit")
>>> xr.testing.assert_identical(back, ds)
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Literal

import numpy as np
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
from zarrkit.dask import ArraySource
from zarrkit.errors import NodeNotFoundError
from zarrkit.hierarchy.array import Array
from zarrkit.hierarchy.group import Group
from zarrkit.storage.base import Store

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
        """The lazy xarray Variable of one array, with its encoding (chunks, shards,
        preferred chunks: the storage grid, codecs) as xarray's zarr backend gives it.

        >>> import zarrkit as zk
        >>> g = zk.group({})
        >>> a = g.create_array("v", shape=(4,), chunks=(2,), dtype="i2", dimension_names=["x"])
        >>> ZarrkitDataStore(g).open_store_variable("v", a).encoding["preferred_chunks"]
        {'x': 2}
        """
        dimensions, attributes = _dimensions_and_attributes(array)
        data = indexing.LazilyIndexedArray(ZarrkitBackendArray(array))
        grid = array.shards or array.chunks
        compressors, filters = array.compressors, array.filters
        sharding = getattr(array, "_pipeline_sharding", None)
        if sharding is not None:  # the inner chunks' codecs, as zarr-python reports them
            compressors = tuple(sharding.inner_pipeline.bytes_bytes)
            filters = tuple(sharding.inner_pipeline.array_array)
        encoding: dict[str, Any] = {
            "chunks": tuple(array.chunks),
            "preferred_chunks": dict(zip(dimensions, grid, strict=True)),
            "shards": array.shards,
            "compressors": tuple(_codec_json(codec) for codec in compressors),
            "filters": tuple(_codec_json(codec) for codec in filters),
        }
        if self._use_mask:
            # As xarray's zarr backend: the fill value masks, as netCDF's _FillValue does.
            if array.fill_value is not None:
                attributes["_FillValue"] = array.fill_value
        else:
            if array.zarr_format == 3:
                encoding["fill_value"] = array.fill_value
            if "_FillValue" in attributes:
                dtype: Any = _variable_dtype(array)
                if coding.strings.check_vlen_dtype(dtype) is str:
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


def to_zarrkit(dataset: xr.Dataset, store: Any, *, zarr_format: int = 3, mode: str = "w-",
               consolidated: bool = True, encoding: Mapping[str, Any] | None = None,
               group: str | None = None, storage_options: dict[str, Any] | None = None
               ) -> Group:
    """Write ``dataset`` to a new group in ``store`` (at ``group``) as ``Dataset.to_zarr``
    does, through zarrkit; return the group.

    Variables are encoded by xarray's own CF machinery (the one ``to_zarr`` runs: times,
    masks and scales, strings, coordinates into ``coordinates`` attributes); dimension
    names go to ``dimension_names`` (format 3) or ``_ARRAY_DIMENSIONS`` (format 2); fill
    values follow ``to_zarr`` (format 2: ``_FillValue`` is the array's fill value; format 3:
    the ``fill_value`` encoding, NaN for floats, ``_FillValue`` kept as a base64
    attribute). ``encoding`` maps variable names to ``to_zarr``'s encoding keys
    (``chunks``, ``shards``, ``compressors``, ``filters``, ``_FillValue``, ``dtype``,
    ``units``...). Dask-backed variables are written in parallel, one task per block
    (:func:`zarrkit.dask.store`). ``mode`` is ``"w-"`` (fail if a node exists) or ``"w"``
    (replace it); ``consolidated`` consolidates the metadata, as ``xarray.open_zarr``
    expects.

    >>> import numpy as np, pandas as pd, xarray as xr
    >>> ds = xr.Dataset({"v": (("time",), [1.0, np.nan])},
    ...                 coords={"time": pd.date_range("2000-01-01", periods=2)})
    >>> g = to_zarrkit(ds, {}, zarr_format=2, encoding={"v": {"_FillValue": -9.0}})
    >>> g["v"][:], g["time"].attrs["units"]
    (array([ 1., -9.]), 'days since 2000-01-01 00:00:00')
    """
    if not isinstance(dataset, xr.Dataset):
        raise TypeError(f"to_zarrkit writes an xarray Dataset, not {type(dataset).__name__}")
    if mode not in ("w", "w-"):
        raise ValueError(f"mode must be 'w' or 'w-', found {mode!r}")
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format must be 2 or 3, found {zarr_format!r}")
    for name in dataset.variables:
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"variable names must be non-empty strings without '/', "
                             f"found {name!r}")
    variables, attributes = conventions.encode_dataset_coordinates(dataset)
    checked: set[Hashable] = set()
    for name, variable_encoding in (encoding or {}).items():
        if name not in variables:
            raise ValueError(f"encoding given for {name!r}, which is not a variable of the "
                             f"dataset")
        variables[name].encoding = dict(variable_encoding)
        checked.add(name)
    root = open_group(store, mode=mode, path=group, zarr_format=zarr_format,
                      attributes={k: encode_zarr_attr_value(v) for k, v in attributes.items()},
                      storage_options=storage_options)
    writes = []
    for name, variable in variables.items():
        array, values = _create_variable_array(root, str(name), variable,
                                               3 if zarr_format == 3 else 2,
                                               check=name in checked)
        if _is_dask(values):
            from zarrkit.dask import store as store_dask

            writes.append(store_dask(values, array, compute=False))
        elif array.size:
            array[...] = np.asarray(values)
    if writes:
        import dask

        dask.compute(*writes)
    if consolidated:
        consolidate_metadata(root.store, root.path)
    return root


def _is_dask(data: Any) -> bool:
    return type(data).__module__.startswith("dask.")


def _create_variable_array(root: Group, name: str, variable: Variable,
                           zarr_format: Literal[2, 3], *,
                           check: bool) -> tuple[Array, Any]:
    """Encode ``variable`` as ``to_zarr`` does and create its array in ``root``; return
    the array and the encoded values to write into it."""
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
    if zarr_format == 3:
        options["dimension_names"] = list(encoded.dims)
    else:
        attributes[DIMENSION_KEY] = list(encoded.dims)
    values = encoded.data
    if coding.strings.check_vlen_dtype(dtype) is str:
        dtype = str
    elif dtype.kind == "T":  # numpy's StringDType (zarr-python's v3 strings): vlen UTF-8
        dtype, values = str, values.astype(object)
    array = root.create_array(name, shape=encoded.shape, dtype=dtype, fill_value=fill_value,
                              attributes=attributes,
                              write_empty_chunks=zarr_encoding.get("write_empty_chunks"),
                              **options)
    return array, values
