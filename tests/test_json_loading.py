"""Metadata documents parse to what the standard library's parser gives (the oracle), with
the fast parser (orjson) where it is installed, and the standard one's errors otherwise."""

from __future__ import annotations

import json
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from zarrkit.errors import MetadataError
from zarrkit.metadata import jsonio

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=30,
)


def same(a: Any, b: Any) -> bool:
    """Equal, with float -0.0 and 0.0 told apart and ints kept apart from floats."""
    return json.dumps(a) == json.dumps(b) and type(a) is type(b)


@settings(max_examples=300, deadline=None)
@given(value=json_values, indent=st.sampled_from([None, 2]))
def test_documents_parse_as_the_standard_parser_parses_them(value: Any, indent: Any) -> None:
    text = json.dumps(value, indent=indent)
    for data in (text, text.encode()):
        assert same(jsonio.load_json(data, key="zarr.json"), json.loads(text))


@pytest.mark.parametrize("text", [
    '{"a": 123456789012345678901234567890}',  # beyond 64 bits
    '{"a": 1e400, "b": -1e400}',  # infinite once parsed, as the standard parser gives
    '{"a": "\\ud800"}',  # an escaped lone surrogate
    '{"a": 1, "a": 2}',  # the last of duplicate keys
    '{"a": -0.0, "b": 5e-324}',
])
def test_edge_cases_parse_as_the_standard_parser_parses_them(text: str) -> None:
    assert same(jsonio.load_json(text.encode(), key="zarr.json"), json.loads(text))


def test_other_encodings_and_refused_documents() -> None:
    document = {"zarr_format": 3, "name": "é"}
    for encoding in ("utf-16", "utf-32"):
        assert jsonio.load_json(json.dumps(document).encode(encoding), key="k") == document
    for bad in (b'{"a": NaN}', b'{"a": Infinity}', b"{", b"\xff\xfe\x00", b'{"a": 1} x'):
        with pytest.raises(MetadataError, match="^k: malformed JSON"):
            jsonio.load_json(bad, key="k")
    with pytest.raises(MetadataError, match="nests deeper than 128"):
        jsonio.load_json(b"[" * 200 + b"]" * 200, key="k")
    with pytest.raises(MetadataError, match="nests deeper than 128"):
        jsonio.load_json(b"[" * 2000 + b"]" * 2000, key="k")
