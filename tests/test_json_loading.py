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


json_texts = st.recursive(
    st.integers(-10**25, 10**25).map(str) | st.text(alphabet='[]{}"\\ab1').map(json.dumps),
    lambda children: st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]")
    | st.lists(children, max_size=3).map(
        lambda items: "{" + ", ".join(f'"k{i}": {v}' for i, v in enumerate(items)) + "}"),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(text=json_texts, limit=st.integers(0, 6))
def test_the_one_pass_scan_agrees_with_the_python_walks(text: str, limit: int) -> None:
    """The engine's scan gives the depth the document walk gives (brackets and quotes
    inside strings ignored) and finds the long numbers that the digit search finds."""
    if jsonio._json_scan is None:
        pytest.skip("the native engine is not built")
    depth, digits, _ = jsonio._json_scan(text.encode())
    document = json.loads(text)
    assert (depth > limit) == jsonio.json_depth_exceeds(document, limit)
    long_numbers = any(len(token.lstrip("-")) >= 19 for token in
                       json.dumps(document).replace("[", " ").replace("]", " ").replace(
                           ",", " ").replace("}", " ").replace(":", " ").split()
                       if token.lstrip("-").isdigit())
    assert (digits >= 19) == long_numbers


def test_utf16_documents_are_not_scanned_as_bytes() -> None:
    """UTF-16 code units can hold the bytes of brackets and quotes: such documents take
    the Python checks, and still meet the depth limit."""
    tricky = {"a": "\u225b\u5b22\u7b7b", "b": [[1]]}
    for encoding in ("utf-16", "utf-16-le", "utf-32"):
        data = json.dumps(tricky, ensure_ascii=False).encode(encoding)
        assert jsonio.load_json(data, key="k") == tricky
        deep = ("[" * 200 + "]" * 200).encode(encoding)
        with pytest.raises(MetadataError, match="nests deeper than 128"):
            jsonio.load_json(deep, key="k")


member_documents = st.dictionaries(
    st.sampled_from(["big", "bi", "big2", 'b"ig', "x"]), json_values, max_size=5)


@settings(max_examples=300, deadline=None)
@given(document=member_documents, big=json_values, indent=st.sampled_from([None, 2]),
       padding=st.integers(0, 5000), engine=st.sampled_from(["auto", "python"]))
def test_a_member_left_out_is_parsed_around(document: dict[str, Any], big: Any, indent: Any,
                                            padding: int, engine: str) -> None:
    """``omit`` gives the standard parser's document without that member, on both
    engines, whether the member's value is small or large enough for the engine to leave
    it unparsed; the depth limit still covers the text left out."""
    from zarrkit.config import config

    document = {**document, "big": [big, "p" * padding]}
    text = json.dumps(document, indent=indent)
    expected = json.loads(text)
    expected.pop("big")
    with config.set(engine=engine):
        assert same(jsonio.load_json(text.encode(), key="k", omit="big"), expected)
        deep = text.replace('"big": [', '"big": [' + "[" * 200 + "]" * 200 + ", ", 1)
        with pytest.raises(MetadataError, match="nests deeper than 128"):
            jsonio.load_json(deep.encode(), key="k", omit="big")


@settings(max_examples=300, deadline=None)
@given(text=json_texts, name=st.sampled_from(["k0", "k1", "k2"]))
def test_the_scan_finds_a_top_level_members_value(text: str, name: str) -> None:
    """The span the engine's scan gives for a member of the top-level object holds
    exactly that member's value (the first one), and there is none for other texts."""
    if jsonio._json_scan is None:
        pytest.skip("the native engine is not built")
    _, _, span = jsonio._json_scan(text.encode(), name)
    document = json.loads(text)
    if isinstance(document, dict) and name in document:
        assert span is not None
        assert json.loads(text.encode()[span[0]:span[1]]) == document[name]
    else:
        assert span is None
