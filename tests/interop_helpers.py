"""Helpers for the interoperability tests: deterministic test data, value and metadata
comparisons, and small wrappers that open an array with each peer implementation."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numcodecs
import numpy as np
import tensorstore as ts
import zarr

# Characters for text data: ASCII, Latin-1, BMP and astral (4-byte UTF-8 / UTF-32 code points).
_TEXT_ALPHABET = list("abcXYZ09 éß€中𝄞")


def make_data(dtype: Any, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Deterministic data of ``dtype`` and ``shape`` that exercises the type's range: extreme
    integers, NaN and infinities, NaT, empty and full-width strings, arbitrary raw bytes."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dtype.fields is not None:
        out = np.zeros(shape, dtype=dtype)
        for i, name in enumerate(dtype.names):
            field = dtype.fields[name][0]
            base, sub_shape = field.subdtype if field.subdtype is not None else (field, ())
            out[name] = make_data(base, shape + tuple(sub_shape), seed + 7 * (i + 1))
        return out
    kind = dtype.kind
    native = dtype.newbyteorder("=")
    if kind == "b":
        values: Any = rng.integers(0, 2, n).astype(bool)
    elif kind in "iu":
        info = np.iinfo(native)
        values = rng.integers(info.min, info.max, n, endpoint=True, dtype=native)
        values[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    elif kind == "f":
        values = (rng.standard_normal(n) * 1000).astype(native)
        specials = [np.nan, np.inf, -np.inf, -0.0]
        values[: min(n, 4)] = specials[: min(n, 4)]
    elif kind == "c":
        part = np.dtype(f"f{native.itemsize // 2}")
        values = (rng.standard_normal(n) * 100).astype(part) + 1j * (
            rng.standard_normal(n) * 100
        ).astype(part)
        values = values.astype(native)
        specials = [complex(np.nan, 1.0), complex(1.0, -np.inf)]
        values[: min(n, 2)] = specials[: min(n, 2)]
    elif kind in "mM":
        values = rng.integers(-(10**12), 10**12, n).astype("i8").view(native)
        if n:
            values[0] = native.type("NaT")
    elif kind == "S":
        letters = np.frombuffer(b"abcdefghijXYZ0123456789", dtype="S1")
        values = np.array(
            [b"".join(rng.choice(letters, rng.integers(0, dtype.itemsize + 1))) for _ in range(n)],
            dtype=native,
        )
    elif kind == "U":
        values = np.array(
            ["".join(rng.choice(_TEXT_ALPHABET, rng.integers(0, dtype.itemsize // 4 + 1)))
             for _ in range(n)],
            dtype=native,
        )
    elif kind == "V":
        values = rng.integers(0, 256, n * dtype.itemsize, dtype="u1").view(native)
    else:
        raise AssertionError(f"no data generator for {dtype}")
    return np.asarray(values).astype(dtype).reshape(shape)


def make_text(shape: tuple[int, ...], seed: int = 0, *, as_bytes: bool = False) -> np.ndarray:
    """An object array of variable-length str (or bytes), including empty items."""
    rng = np.random.default_rng(seed)
    out = np.empty(shape, dtype=object)
    flat = out.reshape(-1)
    for i in range(flat.size):
        text = "".join(rng.choice(_TEXT_ALPHABET, rng.integers(0, 9)))
        flat[i] = text.encode("utf-8") if as_bytes else text
    return out


def assert_same(actual: Any, expected: np.ndarray, *, exact_dtype: bool = True) -> None:
    """``actual`` equals ``expected`` element for element (NaN equals NaN, NaT equals NaT,
    raw and structured values compare by field), with the same shape and data type.

    A numpy scalar (what zarr-python and zarrkit return for a 0-d array) carries no byte order
    or string width, so only its scalar type is compared before its value."""
    if isinstance(actual, np.generic) and expected.dtype.kind != "O":
        assert type(actual) is expected.dtype.type, (type(actual), expected.dtype)
        actual = np.asarray(actual, dtype=expected.dtype)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype.kind == "O":
        assert actual.dtype.kind in "OT", actual.dtype
        got = actual.tolist()
        want = expected.tolist()
        assert got == want
        # str and bytes items must not be confused: b"" != "" already, but check all types.
        assert [type(x) for x in np.ravel(actual)] == [type(x) for x in np.ravel(expected)]
        return
    if exact_dtype:
        assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    else:
        assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (
            actual.dtype, expected.dtype)
    if expected.dtype.fields is not None:
        for name in expected.dtype.names:
            assert_same(actual[name], expected[name], exact_dtype=exact_dtype)
        return
    kind = expected.dtype.kind
    if kind in "fc":
        np.testing.assert_array_equal(actual, expected)
    elif kind in "mM":
        assert np.array_equal(actual.astype(expected.dtype.newbyteorder("=")).view("i8"),
                              expected.astype(expected.dtype.newbyteorder("=")).view("i8"))
    elif kind == "V":
        assert np.ascontiguousarray(actual).tobytes() == np.ascontiguousarray(expected).tobytes()
    else:
        assert np.array_equal(actual, expected)


def assert_same_scalar(actual: Any, expected: Any, dtype: np.dtype) -> None:
    """Two fill values are the same value of ``dtype`` (``None`` only equals ``None``)."""
    if expected is None:
        assert actual is None, actual
        return
    assert actual is not None
    if dtype.kind == "O":
        assert actual == expected and type(actual) is type(expected), (actual, expected)
        return
    assert_same(np.asarray(actual, dtype=dtype), np.asarray(expected, dtype=dtype))


def expected_with_fill(
    shape: tuple[int, ...], dtype: Any, fill: Any, region: Any = (), data: Any = None
) -> np.ndarray:
    """An array of ``fill`` (zero when ``None``, as peers read null fills) with ``data`` at
    ``region``."""
    dtype = np.dtype(dtype)
    out = np.empty(shape, dtype=dtype)
    if dtype.kind == "O":
        out[...] = fill
    else:
        out[...] = np.zeros((), dtype=dtype) if fill is None else np.asarray(fill, dtype=dtype)
    if data is not None:
        out[region] = data
    return out


def chunk_files(path: Path) -> set[str]:
    """Relative names of the chunk files stored for the array in directory ``path``."""
    return {
        p.relative_to(path).as_posix()
        for p in path.rglob("*")
        if p.is_file() and not p.name.startswith(".z")
    }


def codec_json(codec: Any) -> dict[str, Any] | None:
    """The JSON configuration of a codec given as a numcodecs instance or a dict."""
    if codec is None:
        return None
    if isinstance(codec, dict):
        return numcodecs.get_codec(dict(codec)).get_config()
    return codec.get_config()


def same_codec(actual: Any, expected: Any) -> bool:
    """Whether two codec configurations describe the same codec (defaults filled in)."""
    if expected is None:
        return actual is None
    if actual is None:
        return False
    a = codec_json(actual)
    b = codec_json(expected)
    return numcodecs.get_codec(dict(a)) == numcodecs.get_codec(dict(b))


# --- peers -----------------------------------------------------------------------------------
def zarr_open(path: Path, inner: str | None = None) -> Any:
    """Open an array read-only with zarr-python, as a Zarr format 2 array."""
    kwargs = {"path": inner} if inner else {}
    return zarr.open_array(store=str(path), mode="r", zarr_format=2, **kwargs)


def ts_spec(path: Path, inner: str | None = None, field: str | None = None) -> dict[str, Any]:
    """A tensorstore spec for the zarr (format 2) array in directory ``path``."""
    kvstore: dict[str, Any] = {"driver": "file", "path": str(path) + "/"}
    if inner:
        kvstore["path"] = str(path) + "/" + inner + "/"
    spec: dict[str, Any] = {"driver": "zarr", "kvstore": kvstore}
    if field is not None:
        spec["field"] = field
    return spec


def ts_open(path: Path, inner: str | None = None, field: str | None = None) -> Any:
    """Open an array read-only with tensorstore."""
    return ts.open(ts_spec(path, inner, field), read=True).result()


def ts_read(path: Path, inner: str | None = None, field: str | None = None) -> np.ndarray:
    """Read a whole array with tensorstore."""
    return np.asarray(ts_open(path, inner, field).read().result())


def ts_metadata(store: Any) -> dict[str, Any]:
    """The ``.zarray``-style metadata tensorstore resolved for an open array."""
    return store.spec().to_json()["metadata"]
