"""zarrkit's top-level creation and opening functions take every parameter that
zarr-python's take, of the same kind and with the same default where a caller can tell."""

from __future__ import annotations

import inspect

import pytest

import zarrkit as zk

zarr = pytest.importorskip("zarr")

FUNCTIONS = [
    "array", "create", "create_array", "create_group", "create_hierarchy", "empty",
    "empty_like", "from_array", "full", "full_like", "group", "load", "ones", "ones_like",
    "open", "open_array", "open_consolidated", "open_group", "open_like", "save",
    "save_array", "save_group", "tree", "zeros", "zeros_like", "consolidate_metadata",
    "print_debug_info", "set_log_level", "set_format",
    # Methods and names below the top level.
    "Group.move", "Group.create_hierarchy", "Group.get_array", "Group.get_group",
    "Group.require_array", "Array.from_dict", "Array.open", "Array.with_config",
    "storage.WrapperStore", "storage.LoggingStore", "codecs.register_codec",
    "codecs.ShardingCodec", "codecs.BytesCodec", "codecs.BloscCodec", "codecs.ScaleOffset",
]
# zarr-python 3's functions that zarrkit gives zarr-python 2's signatures (zarr-python 3
# only raises NotImplementedError there; test_dropin_api_gaps checks them).
ZARR_2_SIGNATURES = {"copy", "copy_all", "copy_store"}
# Removed from zarr-python (3.2) and kept in zarrkit with their old behaviour: zarrkit
# adds, never lacks.
REMOVED_UPSTREAM = {"Array.create": ("shape", "dtype", "chunk_shape", "codecs"),
                    "Group.array": ("name", "data"),
                    "Group.create_dataset": ("name",),
                    "Group.require_dataset": ("name", "shape")}
# zarr-python's functions whose every argument is spelled out in zarrkit: no catch-all.
EXPLICIT = ["create", "create_array", "create_group", "from_array", "group", "open",
            "open_array", "open_group"]
# Defaults that differ in spelling, not in effect: zarr-python's sentinel objects
# (DefaultFillValue), its format default 3 (zarrkit: None, meaning
# zarrkit.config.default_zarr_format, which is 3), its "" root path (zarrkit: None, the root
# as well) and open/open_array's mode (zarr-python reads it from **kwargs).
SAME_EFFECT = {
    ("create_array", "zarr_format"), ("open_array", "path"), ("consolidate_metadata", "path"),
}
# zarr-python's *args that only ever carry the store: a positional store is enough.
STORE_ARGS = {"open_consolidated"}

KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _resolve(module: object, dotted: str) -> object:
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def _parameters(function: object) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(function).parameters)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_zarrkit_takes_every_parameter_of_zarr_python(name: str) -> None:
    theirs = _parameters(_resolve(zarr, name))
    ours = _parameters(_resolve(zk, name))
    catch_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ours.values())
    for pname, param in theirs.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            assert name in EXPLICIT or catch_all, f"{name}() takes no **kwargs"
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            if name in STORE_ARGS:
                assert next(iter(ours.values())).kind in KINDS, f"{name}() lacks a store"
            else:
                assert any(p.kind is param.kind for p in ours.values()), f"{name}() lacks *args"
            continue
        assert pname in ours, f"zarrkit.{name}() lacks {pname!r}"
        mine = ours[pname]
        # Positional in zarr-python: positional at the same place in zarrkit.
        if param.kind in KINDS:
            assert mine.kind in KINDS, f"{name}({pname}) must be positional"
            assert list(ours).index(pname) == list(theirs).index(pname), (name, pname)
        else:
            assert mine.kind is not inspect.Parameter.POSITIONAL_ONLY, (name, pname)
        # A parameter that zarr-python makes optional is optional here too.
        if param.default is not inspect.Parameter.empty:
            assert mine.default is not inspect.Parameter.empty, f"{name}({pname}) required"
            simple = isinstance(param.default, (bool, int, str, type(None)))
            if simple and (name, pname) not in SAME_EFFECT:
                assert mine.default == param.default, (name, pname, mine.default)


@pytest.mark.parametrize("name", EXPLICIT)
def test_explicit_functions_have_no_catch_all(name: str) -> None:
    kinds = {p.kind for p in _parameters(getattr(zk, name)).values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds


@pytest.mark.parametrize("name", ["create_array", "open_array", "open_group", "open",
                                  "group", "create_group", "from_array"])
def test_a_misspelt_keyword_names_the_public_function(name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name}\(\) got an unexpected keyword"):
        getattr(zk, name)({}, chunkz=(2,))


def test_zarrkit_extras_stay() -> None:
    assert "mmap" in _parameters(zk.open_array)
    assert "write_empty_chunks" in _parameters(zk.create_array)
    assert "consolidated" in _parameters(zk.open_group)


def test_every_function_of_zarr_python_is_checked() -> None:
    """A function new in zarr-python's top level must be added to FUNCTIONS above."""
    import inspect as _inspect

    functions = {n for n in zarr.__all__ if _inspect.isfunction(getattr(zarr, n))}
    assert functions - set(FUNCTIONS) - ZARR_2_SIGNATURES == set()
    assert all(hasattr(zk, n) for n in functions)


@pytest.mark.parametrize("name", sorted(REMOVED_UPSTREAM))
def test_what_zarr_python_removed_stays(name: str) -> None:
    with pytest.raises(AttributeError):
        _resolve(zarr, name)
    assert set(REMOVED_UPSTREAM[name]) <= set(_parameters(_resolve(zk, name)))
