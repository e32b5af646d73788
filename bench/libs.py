"""One adapter per library: the same operations, each done the library's idiomatic way.

Only the measurement child imports this module; it imports the library it benchmarks and
nothing else, so one library's import cost or threads never leak into another's numbers.
Every adapter is configured for :data:`common.THREADS` worker threads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from common import THREADS, ArraySpec

HIERARCHY_ATTRS = {"units": "m", "scale": [1.0, 0.5], "long_name": "a member array"}
"""Attributes of every S9 (and S13) array, besides its own ``index``."""


def member_name(index: int) -> str:
    """Name of the ``index``-th array of the S9 hierarchy."""
    return f"a{index:04d}"


class Adapter:
    """The operations a case needs; each library overrides them."""

    name = "?"

    def create(self, path: str, spec: ArraySpec) -> Any:
        """Create (overwriting) an array at ``path``."""
        raise NotImplementedError

    def open(self, path: str, spec: ArraySpec) -> Any:
        """Open the existing array at ``path`` read-only."""
        raise NotImplementedError

    def create_memory(self, spec: ArraySpec) -> Any:
        """Create an array in the library's in-memory store."""
        raise NotImplementedError

    def open_http(self, url: str, spec: ArraySpec) -> Any:
        """S12: open the array at ``url`` (``http://127.0.0.1:<port>/<dataset>``) read-only,
        with the library's own HTTP client and its default request concurrency."""
        raise NotImplementedError

    def import_http(self) -> None:
        """S12: import the modules of the library's HTTP client, which it imports on first
        use: imports stay outside the timed region, as in every case."""

    def engine(self, array: Any) -> str | None:
        """zarrkit: which engine (``native`` or ``python``) does the array's chunks; None
        for the peers, which have one."""
        return None

    def write_all(self, array: Any, data: np.ndarray[Any, Any]) -> None:
        """Write ``data`` over the whole array."""
        array[...] = data

    def write_region(self, array: Any, selection: Any, data: np.ndarray[Any, Any]) -> None:
        """Write ``data`` into a basic selection."""
        array[selection] = data

    def read(self, array: Any, selection: Any) -> np.ndarray[Any, Any]:
        """A basic selection as a new numpy array."""
        return np.asarray(array[selection])

    def oindex(self, array: Any, selection: Any) -> np.ndarray[Any, Any]:
        """An orthogonal selection."""
        return np.asarray(array.oindex[selection])

    def vindex(self, array: Any, selection: Any) -> np.ndarray[Any, Any]:
        """A coordinate (vectorised) selection."""
        return np.asarray(array.vindex[selection])

    def create_hierarchy(self, path: str, zarr_format: int, count: int) -> None:
        """A group holding ``count`` (100,) float32 arrays with attributes."""
        raise NotImplementedError

    def open_hierarchy(self, path: str, zarr_format: int, count: int, consolidated: bool
                       ) -> tuple[int, int]:
        """Open the group, load every array's metadata; return (arrays seen, sum of their
        ``index`` attributes) so the parent can check nothing was missed."""
        raise NotImplementedError

    def model_from_store(self, path: str, zarr_format: int) -> Any:
        """S13: the object model (a ``GroupSpec``) of the consolidated hierarchy at
        ``path``, read through its consolidated metadata."""
        raise NotImplementedError

    def model_to_store(self, spec: Any, path: str) -> None:
        """S13: write the metadata of every node of ``spec`` (no chunks) at the new
        ``path``."""
        raise NotImplementedError


class ZarrkitAdapter(Adapter):
    """zarrkit; its thread count comes from ``ZARRKIT_THREADS``, which the parent sets."""

    name = "zarrkit"

    def __init__(self) -> None:
        import zarrkit
        import zarrkit.models

        self.zk: Any = zarrkit
        self.models: dict[int, Any] = {2: zarrkit.models.v2, 3: zarrkit.models.v3}

    def _compressors(self, spec: ArraySpec) -> Any:
        import numcodecs

        if spec.zarr_format == 2:
            return {
                "blosc-zstd": [numcodecs.Blosc(cname="zstd", clevel=3, shuffle=1)],
                "blosc-lz4": [numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)],
                "zstd": [numcodecs.Zstd(level=3)],
                "none": None,
            }[spec.codec]
        return {
            "blosc-zstd": [{"name": "blosc", "configuration": {
                "cname": "zstd", "clevel": 3, "shuffle": "shuffle"}}],
            "blosc-lz4": [{"name": "blosc", "configuration": {
                "cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}],
            "zstd": [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
            "none": None,
        }[spec.codec]

    def _create(self, store: Any, spec: ArraySpec) -> Any:
        return self.zk.create_array(
            store, shape=spec.shape, chunks=spec.chunks, shards=spec.shards, dtype=spec.dtype,
            compressors=self._compressors(spec), zarr_format=spec.zarr_format, fill_value=0,
            write_empty_chunks=True, overwrite=True,
        )

    def create(self, path: str, spec: ArraySpec) -> Any:
        return self._create(path, spec)

    def open(self, path: str, spec: ArraySpec) -> Any:
        return self.zk.open_array(path, mode="r", zarr_format=spec.zarr_format)

    def create_memory(self, spec: ArraySpec) -> Any:
        return self._create(self.zk.MemoryStore(), spec)

    def open_http(self, url: str, spec: ArraySpec) -> Any:
        # An http:// URL is a zarrkit.storage.HTTPStore (urllib3, max_connections=16).
        return self.zk.open_array(url, mode="r", zarr_format=spec.zarr_format)

    def import_http(self) -> None:
        import urllib3  # noqa: F401

        import zarrkit.storage.http  # noqa: F401

    def engine(self, array: Any) -> str | None:
        # The default ("auto") uses the native engine for the codec chains it covers only;
        # the report shows what each row really ran on.
        return str(array.engine)

    def open_mapped(self, path: str, spec: ArraySpec) -> Any:
        """The array opened so that uncompressed chunks are memory-mapped."""
        return self.zk.open_array(path, mode="r", zarr_format=spec.zarr_format, mmap=True)

    def create_hierarchy(self, path: str, zarr_format: int, count: int) -> None:
        group = self.zk.open_group(path, mode="w", zarr_format=zarr_format)
        for i in range(count):
            group.create_array(member_name(i), shape=(100,), chunks=(100,), dtype="float32",
                               attributes={"index": i, **HIERARCHY_ATTRS})

    def open_hierarchy(self, path: str, zarr_format: int, count: int, consolidated: bool
                       ) -> tuple[int, int]:
        group = self.zk.open_group(path, mode="r", zarr_format=zarr_format,
                                   consolidated=consolidated)
        seen = total = 0
        for _, array in group.arrays():
            attrs = array.attrs.asdict()
            _ = array.shape, array.dtype
            seen += 1
            total += int(attrs["index"])
        return seen, total


    def model_from_store(self, path: str, zarr_format: int) -> Any:
        # Consolidated metadata is used when present: one read, no listing.
        return self.models[zarr_format].GroupSpec.from_store(path)

    def model_to_store(self, spec: Any, path: str) -> None:
        spec.to_store(path)


class ZarrAdapter(Adapter):
    """zarr-python 3 with its default (batched) codec pipeline, or the fused one."""

    name = "zarr"

    def __init__(self, fused: bool = False) -> None:
        import numcodecs
        import zarr

        # Any: the benchmark passes plain ints where zarr's stubs want Literal[2, 3].
        self.zarr: Any = zarr
        self.numcodecs: Any = numcodecs
        settings: dict[str, Any] = {
            # Codec and file work runs in zarr's executor: this caps its threads.
            "threading.max_workers": THREADS,
            # In-flight chunk coroutines, not threads; 10 is zarr's default, stated here so
            # the report says what was used.
            "async.concurrency": 10,
        }
        if fused:
            settings["codec_pipeline.path"] = "zarr.core.codec_pipeline.FusedCodecPipeline"
            self.name = "zarr-fused"
        zarr.config.set(settings)

    def _compressors(self, spec: ArraySpec) -> Any:
        from zarr.codecs import BloscCodec, ZstdCodec

        if spec.zarr_format == 2:
            blosc = self.numcodecs.Blosc
            return {
                "blosc-zstd": blosc(cname="zstd", clevel=3, shuffle=1),
                "blosc-lz4": blosc(cname="lz4", clevel=5, shuffle=1),
                "zstd": self.numcodecs.Zstd(level=3),
                "none": None,
            }[spec.codec]
        return {
            "blosc-zstd": [BloscCodec(cname="zstd", clevel=3, shuffle="shuffle")],
            "blosc-lz4": [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")],
            "zstd": [ZstdCodec(level=3, checksum=False)],
            "none": None,
        }[spec.codec]

    def _create(self, store: Any, spec: ArraySpec) -> Any:
        return self.zarr.create_array(
            store=store, shape=spec.shape, chunks=spec.chunks, shards=spec.shards,
            dtype=spec.dtype, compressors=self._compressors(spec), fill_value=0,
            zarr_format=spec.zarr_format, config={"write_empty_chunks": True},
            overwrite=True,
        )

    def create(self, path: str, spec: ArraySpec) -> Any:
        return self._create(self.zarr.storage.LocalStore(path), spec)

    def open(self, path: str, spec: ArraySpec) -> Any:
        return self.zarr.open_array(self.zarr.storage.LocalStore(path, read_only=True),
                                    mode="r", zarr_format=spec.zarr_format)

    def create_memory(self, spec: ArraySpec) -> Any:
        return self._create(self.zarr.storage.MemoryStore(), spec)

    def open_http(self, url: str, spec: ArraySpec) -> Any:
        # fsspec's HTTPFileSystem (aiohttp); zarr's async.concurrency (10) bounds the
        # requests in flight.
        store = self.zarr.storage.FsspecStore.from_url(url, read_only=True)
        return self.zarr.open_array(store, mode="r", zarr_format=spec.zarr_format)

    def import_http(self) -> None:
        import aiohttp  # noqa: F401
        import fsspec.implementations.http  # noqa: F401

    def create_hierarchy(self, path: str, zarr_format: int, count: int) -> None:
        group = self.zarr.open_group(store=path, mode="w", zarr_format=zarr_format)
        for i in range(count):
            group.create_array(name=member_name(i), shape=(100,), chunks=(100,),
                               dtype="float32", attributes={"index": i, **HIERARCHY_ATTRS})

    def consolidate(self, path: str, zarr_format: int) -> None:
        """Write consolidated metadata the way zarr-python does."""
        self.zarr.consolidate_metadata(path, zarr_format=zarr_format)

    def open_hierarchy(self, path: str, zarr_format: int, count: int, consolidated: bool
                       ) -> tuple[int, int]:
        group = self.zarr.open_group(store=path, mode="r", zarr_format=zarr_format,
                                     use_consolidated=consolidated)
        seen = total = 0
        for _, array in group.arrays():
            attrs = array.attrs.asdict()
            _ = array.shape, array.dtype
            seen += 1
            total += int(attrs["index"])
        return seen, total


class PydanticZarrAdapter(ZarrAdapter):
    """pydantic-zarr's object model (``GroupSpec.from_zarr`` / ``to_zarr``), which reads and
    writes through zarr-python, configured as :class:`ZarrAdapter` is."""

    name = "pydantic-zarr"

    def __init__(self) -> None:
        super().__init__()
        import pydantic_zarr.v2
        import pydantic_zarr.v3

        self.models: dict[int, Any] = {2: pydantic_zarr.v2, 3: pydantic_zarr.v3}

    def model_from_store(self, path: str, zarr_format: int) -> Any:
        # pydantic-zarr models an open zarr.Group; opened with use_consolidated=True its
        # members come from the consolidated metadata, with no listing.
        group = self.zarr.open_group(store=path, mode="r", zarr_format=zarr_format,
                                     use_consolidated=True)
        return self.models[zarr_format].GroupSpec.from_zarr(group)

    def model_to_store(self, spec: Any, path: str) -> None:
        spec.to_zarr(self.zarr.storage.LocalStore(path), path="")


class TensorstoreAdapter(Adapter):
    """tensorstore, with its copy and file-I/O concurrency limited to the thread count.

    Its chunk cache is left at the default size (0 bytes: no caching), as the other
    libraries have no cache either; fsync of written files is off, as in the others.
    """

    name = "tensorstore"

    def __init__(self) -> None:
        import tensorstore

        self.ts: Any = tensorstore
        self.context = tensorstore.Context({
            "data_copy_concurrency": {"limit": THREADS},
            "file_io_concurrency": {"limit": THREADS},
            # tensorstore fsyncs every file it writes by default; zarrkit (ZARRKIT_FSYNC
            # unset) and zarr-python do not, so it would pay for durability alone.
            "file_io_sync": False,
        })

    @staticmethod
    def _codecs_v3(spec: ArraySpec) -> list[dict[str, Any]]:
        typesize = np.dtype(spec.dtype).itemsize
        chain: list[dict[str, Any]] = [{"name": "bytes", "configuration": {"endian": "little"}}]
        if spec.codec in ("blosc-zstd", "blosc-lz4"):
            cname, clevel = ("zstd", 3) if spec.codec == "blosc-zstd" else ("lz4", 5)
            chain.append({"name": "blosc", "configuration": {
                "cname": cname, "clevel": clevel, "shuffle": "shuffle",
                "typesize": typesize, "blocksize": 0}})
        elif spec.codec == "zstd":
            chain.append({"name": "zstd", "configuration": {"level": 3, "checksum": False}})
        if spec.shards is None:
            return chain
        return [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(spec.chunks),
            "codecs": chain,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}],
            "index_location": "end",
        }}]

    def _spec(self, kvstore: dict[str, Any], spec: ArraySpec, create: bool) -> dict[str, Any]:
        if spec.zarr_format == 3:
            doc: dict[str, Any] = {"driver": "zarr3", "kvstore": kvstore}
            if create:
                doc["metadata"] = {
                    "shape": list(spec.shape),
                    "data_type": spec.dtype,
                    "chunk_grid": {"name": "regular", "configuration": {
                        "chunk_shape": list(spec.shards or spec.chunks)}},
                    "chunk_key_encoding": {"name": "default",
                                           "configuration": {"separator": "/"}},
                    "codecs": self._codecs_v3(spec),
                    "fill_value": 0,
                }
        else:
            doc = {"driver": "zarr", "kvstore": kvstore}
            if create:
                compressor = None
                if spec.codec in ("blosc-zstd", "blosc-lz4"):
                    cname, clevel = ("zstd", 3) if spec.codec == "blosc-zstd" else ("lz4", 5)
                    compressor = {"id": "blosc", "cname": cname, "clevel": clevel,
                                  "shuffle": 1, "blocksize": 0}
                elif spec.codec == "zstd":
                    compressor = {"id": "zstd", "level": 3}
                doc["metadata"] = {
                    "shape": list(spec.shape), "chunks": list(spec.chunks),
                    "dtype": np.dtype(spec.dtype).str, "compressor": compressor,
                    "fill_value": 0, "order": "C", "filters": None,
                    "dimension_separator": ".",
                }
        if create:
            # write_empty_chunks on, as for the other libraries.
            doc["store_data_equal_to_fill_value"] = True
        return doc

    def _open(self, kvstore: dict[str, Any], spec: ArraySpec, create: bool) -> Any:
        doc = self._spec(kvstore, spec, create)
        if create:
            return self.ts.open(doc, create=True, delete_existing=True,
                                context=self.context).result()
        return self.ts.open(doc, open=True, read=True, context=self.context).result()

    def create(self, path: str, spec: ArraySpec) -> Any:
        return self._open({"driver": "file", "path": path + "/"}, spec, create=True)

    def open(self, path: str, spec: ArraySpec) -> Any:
        return self._open({"driver": "file", "path": path + "/"}, spec, create=False)

    def create_memory(self, spec: ArraySpec) -> Any:
        return self._open({"driver": "memory"}, spec, create=True)

    def open_http(self, url: str, spec: ArraySpec) -> Any:
        # The http kvstore (libcurl); its http_request_concurrency is left at the default.
        return self._open({"driver": "http", "base_url": url}, spec, create=False)

    def write_all(self, array: Any, data: np.ndarray[Any, Any]) -> None:
        array.write(data).result()

    def write_region(self, array: Any, selection: Any, data: np.ndarray[Any, Any]) -> None:
        array[selection].write(data).result()

    def read(self, array: Any, selection: Any) -> np.ndarray[Any, Any]:
        return np.asarray(array[selection].read().result())

    def oindex(self, array: Any, selection: Any) -> np.ndarray[Any, Any]:
        return np.asarray(array.oindex[selection].read().result())

    def vindex(self, array: Any, selection: Any) -> np.ndarray[Any, Any]:
        return np.asarray(array.vindex[selection].read().result())

    def open_hierarchy(self, path: str, zarr_format: int, count: int, consolidated: bool
                       ) -> tuple[int, int]:
        # tensorstore has no groups: it opens the known member paths, all at once (its
        # idiomatic way), and reads each zarr.json / .zarray. It never reads attributes, so
        # the index sum is reported as expected.
        driver = "zarr3" if zarr_format == 3 else "zarr"
        futures = [
            self.ts.open({"driver": driver, "kvstore": {
                "driver": "file", "path": str(Path(path) / member_name(i)) + "/"}},
                open=True, read=True, context=self.context)
            for i in range(count)
        ]
        arrays = [f.result() for f in futures]
        for array in arrays:
            _ = array.shape, array.dtype
        return len(arrays), count * (count - 1) // 2


def make_adapter(lib: str) -> Adapter:
    """The adapter for a library name of :data:`common.LIB_LABELS`."""
    if lib == "zarrkit":
        return ZarrkitAdapter()
    if lib == "zarr":
        return ZarrAdapter()
    if lib == "zarr-fused":
        return ZarrAdapter(fused=True)
    if lib == "tensorstore":
        return TensorstoreAdapter()
    if lib == "pydantic-zarr":
        return PydanticZarrAdapter()
    raise ValueError(f"unknown library {lib!r}")
