"""zarr-python's zarrs codec pipeline (the ``zarrs`` package, Rust) as a second zarr-python
reader and writer in the interop tests.

A test module imports ``zarr_pipeline`` and ``pytest_generate_tests`` from here: every test
in it whose code calls zarr-python then runs twice, with zarr-python's own codec pipeline
(``batched``) and with ``zarrs.ZarrsCodecPipeline`` (``zarrs``); the other tests run once.

zarrs 0.2's own limits and bugs (not zarrkit's: zarr-python's pipeline passes the same cases)
are predicted case by case from each case's parameters, by the rules below, which follow
zarrs-python 0.2.3's ``pipeline.py`` and ``src/lib.rs`` and the zarrs 0.23.8 crate it is
built on. A test module lists, in a dict ``ZARRS_LIMITS``, its tests that meet such a limit:
test name -> a function of the test's parameters (by name, the pipeline left out) that
returns the ``ZarrsLimit`` met, or None where zarrs does what zarr-python does. Those cases,
and only those, are strict xfails under zarrs that must raise the limit's exception, so a
zarrs release that lifts a limit, or another failure, shows here. A hypothesis test instead
rejects the examples that meet a limit (``zarrs_is_active``).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import zarr

PIPELINES = {"batched": "zarr.core.codec_pipeline.BatchedCodecPipeline",
             "zarrs": "zarrs.ZarrsCodecPipeline"}
# A call into zarr-python (not zarrkit) in a test's own code.
_USES_ZARR = re.compile(r"\bzarr\.(?!kit)|\bzarr_(?:open|create|read|write)")

# Format 2 codec ids that zarrs decodes and encodes itself: the v2 codec plugins of zarrs
# 0.23.8 with the features zarrs-python 0.2.3 builds (its defaults + zlib, pcodec, bz2). An
# array with any other codec (delta, quantize, astype, packbits, bitround, lz4, lzma, ...)
# is left whole to zarr-python's own codecs (zarrs.pipeline.get_codec_pipeline_fallback).
ZARRS_V2_CODECS = frozenset({"blosc", "bz2", "fixedscaleoffset", "gzip", "pcodec", "shuffle",
                             "vlen-array", "vlen-bytes", "vlen-utf8", "zlib", "zstd"})
# Data type kinds that zarrs.pipeline also hands to zarr-python's own codecs
# (ZarrsCodecPipeline._raise_error_on_unsupported_batch_dtype).
_FALLBACK_KINDS = frozenset("VSUMmOT")
# zarrkit's and zarr-python's default format 2 compressor, for the cases that name none.
DEFAULT_V2_COMPRESSOR = {"id": "zstd"}


@dataclass(frozen=True)
class ZarrsLimit:
    """A zarrs limit a case meets: why it fails, and the exception the test then raises."""

    reason: str
    raises: type[BaseException]


BYTE_ORDER = ZarrsLimit(
    "zarrs refuses to read big-endian data, before handing anything to zarr-python's codecs "
    "(RuntimeError: Non-native byte order not supported)", RuntimeError)
C_ORDER = ZarrsLimit(
    "zarrs decodes into C-ordered output only, and zarr-python hands it an F-ordered one "
    "for an order 'F' array (ValueError: input array must be a C contiguous array)", ValueError)
EMPTY_CHUNKS = ZarrsLimit(
    "zarrs erases every chunk it encodes that equals the fill value, although "
    "array.write_empty_chunks is True (zarrs-python's store_chunk_bytes ignores the "
    "store_empty_chunks codec option)", AssertionError)
DEFLATE = ("zarrs deflates zlib and gzip chunks with flate2's miniz_oxide, whose streams "
           "decode to the same bytes as, but differ from, the zlib library's that numcodecs "
           "and zarrkit write")
FIXEDSCALEOFFSET = ("zarrs' fixedscaleoffset rounds half away from zero and saturates "
                    "out-of-range values (Rust `.round() as u16`) where numcodecs rounds half "
                    "to even and wraps: the out-of-range fill padding of edge chunks differs")
NAN_FILL = ZarrsLimit(
    "zarrs builds its fill value from zarr-python's metadata.to_dict(), which writes every "
    "NaN as \"NaN\": missing chunks read as the canonical NaN, not the stored payload or sign",
    AssertionError)


def uses_zarr_python(function: Any) -> bool:
    """Whether a test's source calls zarr-python."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    return _USES_ZARR.search(source) is not None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Both pipelines for the tests that call zarr-python."""
    if "zarr_pipeline" in metafunc.fixturenames and uses_zarr_python(metafunc.function):
        metafunc.parametrize("zarr_pipeline", list(PIPELINES), indirect=True)


def zarrs_is_active() -> bool:
    """Whether zarr-python reads and writes with the zarrs pipeline right now."""
    return bool(zarr.config.get("codec_pipeline.path") == PIPELINES["zarrs"])


def _codec_id(codec: Any) -> str:
    return str(codec["id"] if isinstance(codec, dict) else codec.codec_id)


def zarrs_codes_chunks(dtype: Any, codecs: Iterable[Any]) -> bool:
    """Whether zarrs decodes and encodes a format 2 array's chunks itself (not zarr-python).

    ``codecs``: the array's filters and compressor (numcodecs codecs or their configurations;
    None for no compressor). One exception is not modelled, as no case here meets it: zarrs
    refuses a 0-d order "F" array's transpose codec and leaves that array to zarr-python.
    """
    return (np.dtype(dtype).kind not in _FALLBACK_KINDS
            and all(_codec_id(c) in ZARRS_V2_CODECS for c in codecs if c is not None))


def zarrs_read_limit(dtype: Any, order: str, shape: tuple[int, ...],
                     codecs: Iterable[Any]) -> ZarrsLimit | None:
    """Why zarrs fails to read ``shape`` elements of a format 2 array, or None."""
    if math.prod(shape) == 0:  # zarr-python reads no chunk at all
        return None
    if not np.dtype(dtype).isnative:
        return BYTE_ORDER
    # An F-ordered output is C contiguous too while at most one axis is longer than 1.
    if (order == "F" and sum(n > 1 for n in shape) > 1
            and zarrs_codes_chunks(dtype, codecs)):
        return C_ORDER
    return None


def zarrs_empty_chunks_limit(dtype: Any, codecs: Iterable[Any],
                             write_empty_chunks: bool) -> ZarrsLimit | None:
    """Why zarrs leaves out chunks that zarr-python writes, or None."""
    return EMPTY_CHUNKS if write_empty_chunks and zarrs_codes_chunks(dtype, codecs) else None


def zarrs_chunk_bytes_limit(dtype: Any, codecs: list[Any]) -> ZarrsLimit | None:
    """Why zarrs writes other chunk bytes than zarr-python's own codecs, or None.

    The fixedscaleoffset reason assumes values that round or overflow differently (half-way
    values, or out-of-range fill padding in edge chunks), as the cases here have.
    """
    if not zarrs_codes_chunks(dtype, codecs):
        return None
    ids = {_codec_id(c) for c in codecs if c is not None}
    reasons = [DEFLATE] if ids & {"zlib", "gzip"} else []
    reasons += [FIXEDSCALEOFFSET] if "fixedscaleoffset" in ids else []
    return ZarrsLimit("; ".join(reasons), AssertionError) if reasons else None


def zarrs_fill_limit(dtype: Any, fill: Any) -> ZarrsLimit | None:
    """Why zarrs reads a format 3 array's missing chunks with another fill value, or None."""
    try:
        numpy_dtype = np.dtype(dtype)
    except TypeError:
        return None
    if numpy_dtype.kind not in "fc":
        return None
    stored = np.array(fill, dtype=numpy_dtype)
    if numpy_dtype.kind == "c":
        canonical = np.array(complex(np.nan if np.isnan(stored.real) else stored.real,
                                     np.nan if np.isnan(stored.imag) else stored.imag),
                             dtype=numpy_dtype)
    else:
        canonical = np.array(np.nan if np.isnan(stored) else stored, dtype=numpy_dtype)
    return NAN_FILL if canonical.tobytes() != stored.tobytes() else None


def _limit(request: pytest.FixtureRequest) -> ZarrsLimit | None:
    limits: dict[str, Callable[..., ZarrsLimit | None]] = getattr(
        request.module, "ZARRS_LIMITS", {})
    rule = limits.get(request.node.originalname)
    if rule is None:
        return None
    callspec = getattr(request.node, "callspec", None)
    arguments = {k: v for k, v in (callspec.params if callspec else {}).items()
                 if k != "zarr_pipeline"}
    return rule(**arguments)


@pytest.fixture(autouse=True)
def zarr_pipeline(request: pytest.FixtureRequest) -> Iterator[str]:
    """The codec pipeline zarr-python reads and writes with in this test."""
    name = getattr(request, "param", "batched")
    limit = _limit(request) if name == "zarrs" else None
    if limit is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=limit.reason,
                                              raises=limit.raises))
    with zarr.config.set({"codec_pipeline.path": PIPELINES[name]}):
        yield name
