"""The scenarios of the crash harness: what a writer does and what a kill may leave.

A scenario creates its store, plans operations for a writer process (lists of JSON steps,
journaled before they are performed) and performs them with zarrkit; on the checking side it
observes the store through zarrkit (and zarr-python for directory stores) and applies steps
to a model of the state the store must show.

Values tell old from new: each write step stores its own generation number g (never the
fill value 0) in every element it touches, and each attribute change records its g. After a
kill, every object a store write replaces -- a chunk, a shard, a metadata document -- must
hold what it holds in the state after all returned operations (old) or after some prefix of
the steps of the operation in flight (new); anything else is a lost write, a torn write or
garbage.

The array scenarios run in a directory and, named ``sqlite-...`` and ``lmdb-...``, in the
database stores; the ``...-batches`` scenarios check that a database's ``set_many`` is one
transaction (see crash_stores for what else a kill must not leave in a database).
"""

from __future__ import annotations

import itertools
import os
import random
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from crash_stores import DATABASES, STORE_NAMES, open_store, opened

import zarrkit as zk
from zarrkit.paths import ancestors

Step = dict[str, Any]
Region = list[list[int]]  # [start, stop] per dimension
Node = tuple[str, dict[str, Any]]  # (kind, attributes)
FILL = 0
ARRAY = "a"


@dataclass
class Verdict:
    """What a comparison found: failure descriptions, and how many journaled writes (or
    documents) are missing."""

    failures: list[str] = field(default_factory=list)
    lost: int = 0


def generation(round_no: int, op: int, step: int) -> int:
    """The value written by a step: unique per trial, never the fill value."""
    return (round_no + 1) * 1_000_000 + op * 10 + step + 1


def slices(region: Region) -> tuple[slice, ...]:
    return tuple(slice(start, stop) for start, stop in region)


def few_values(values: np.ndarray[Any, Any]) -> str:
    unique = np.unique(values)
    shown = ", ".join(str(v) for v in unique[:6])
    return f"{{{shown}{', ...' if unique.size > 6 else ''}}}"


class Writer(ABC):
    """The writer process's side of a scenario."""

    @abstractmethod
    def plan(self, rng: random.Random, round_no: int, op: int) -> list[Step]:
        """The steps of the next operation."""

    @abstractmethod
    def perform(self, steps: list[Step]) -> None:
        """Carry the steps out through zarrkit."""


class Scenario(ABC):
    """One crash scenario; ``State`` is a numpy array, a :class:`Tree` or the generations
    of a :class:`BatchScenario`'s batches. ``storage`` is where the data live: "directory",
    "zip", "sqlite" or "lmdb" (see crash_stores)."""

    def __init__(self, name: str, zarr_format: int, *, storage: str = "directory") -> None:
        self.name = name
        self.zarr_format = zarr_format
        self.storage = storage

    @property
    def zip_store(self) -> bool:
        return self.storage == "zip"

    @property
    def database(self) -> bool:
        return self.storage in DATABASES

    def store_path(self, directory: Path) -> Path:
        return directory / STORE_NAMES[self.storage]

    @abstractmethod
    def create(self, path: Path) -> None:
        """Create the store the writers start from (in the test process)."""

    @abstractmethod
    def writer(self, path: Path) -> Writer:
        """Open the store for a writer process."""

    @abstractmethod
    def observe(self, path: Path) -> tuple[Any, list[str]]:
        """The state the store shows (None if it cannot be read) and what is wrong with
        it on its own (unreadable nodes, undecodable chunks, zarr-python disagreeing)."""

    @abstractmethod
    def apply(self, state: Any, step: Step) -> Any:
        """The state after ``step`` (a new object; ``state`` is left as it is)."""

    @abstractmethod
    def compare(self, observed: Any, candidates: list[Any]) -> Verdict:
        """Judge ``observed`` against the old state (``candidates[0]``) and the states
        the operation in flight may have reached (the rest)."""

    def finish(self, path: Path, state: Any) -> list[str]:
        """Checks after the last kill of a trial, which may change the store."""
        return []

    def candidates(self, state: Any, returned: list[list[Step]],
                   in_flight: list[Step] | None) -> list[Any]:
        """The old state (all returned operations applied to ``state``) followed by the
        state after each prefix of the operation in flight."""
        for step in itertools.chain.from_iterable(returned):
            state = self.apply(state, step)
        states = [state]
        for step in in_flight or []:
            states.append(self.apply(states[-1], step))
        return states


# --- arrays: chunk, partial-chunk, resize, sharded and ZIP-append writes -----------------

@dataclass(frozen=True)
class Geometry:
    shape: tuple[int, int]
    chunks: tuple[int, int]
    shards: tuple[int, int] | None = None

    @property
    def objects(self) -> tuple[int, int]:
        """The extent of what one store write replaces: a shard, or a chunk."""
        return self.shards or self.chunks


PLAIN = Geometry(shape=(40, 60), chunks=(10, 15))
SHARDED = Geometry(shape=(64, 48), chunks=(8, 8), shards=(32, 24))
ARCHIVED = Geometry(shape=(80, 120), chunks=(10, 15))


def aligned_region(rng: random.Random, shape: tuple[int, ...], unit: tuple[int, ...],
                   most: int = 2) -> Region:
    """One to ``most`` whole units (chunks or shards) per dimension, clipped to the shape."""
    region = []
    for size, step in zip(shape, unit, strict=True):
        first = rng.randrange(-(-size // step))
        region.append([first * step, min((first + rng.randint(1, most)) * step, size)])
    return region


def unaligned_region(rng: random.Random, shape: tuple[int, ...], unit: tuple[int, ...]
                     ) -> Region:
    """A box starting anywhere, up to one and a half units long per dimension."""
    region = []
    for size, step in zip(shape, unit, strict=True):
        start = rng.randrange(size)
        region.append([start, min(size, start + rng.randint(1, step + step // 2))])
    return region


def object_regions(shape: tuple[int, ...], unit: tuple[int, ...]
                   ) -> list[tuple[tuple[int, ...], tuple[slice, ...]]]:
    """(grid index, region clipped to ``shape``) of every chunk or shard."""
    counts = [range(-(-size // step)) for size, step in zip(shape, unit, strict=True)]
    return [(index, tuple(slice(i * n, min((i + 1) * n, s))
                          for i, n, s in zip(index, unit, shape, strict=True)))
            for index in itertools.product(*counts)]


class ArrayScenario(Scenario):
    """An int32 array ``a`` (fill value 0) in a group; ``kind`` says what the writer does:
    ``full`` (whole chunks), ``partial`` (read-modify-write), ``resize`` (resizes among
    partial writes), ``sharded`` (whole and partial shards) or ``zip`` (append sessions to a
    ZIP archive: open with mode "a", three to eight writes, close). The group lives in a
    directory, or in the database ``storage`` names."""

    def __init__(self, name: str, zarr_format: int, kind: str,
                 geometry: Geometry = PLAIN, storage: str = "directory") -> None:
        super().__init__(name, zarr_format, storage="zip" if kind == "zip" else storage)
        self.kind = kind
        self.geometry = geometry

    def create(self, path: Path) -> None:
        with opened(self.storage, path, "w") as store:
            root = zk.open_group(store, mode="w", zarr_format=self.zarr_format)
            root.create_array(ARRAY, shape=self.geometry.shape, chunks=self.geometry.chunks,
                              shards=self.geometry.shards, dtype="i4", fill_value=FILL)

    def writer(self, path: Path) -> Writer:
        return ArrayWriter(self, path)

    def plan(self, rng: random.Random, shape: tuple[int, ...], g: int) -> list[Step]:
        geometry = self.geometry
        if self.kind == "full":
            return [{"write": aligned_region(rng, shape, geometry.chunks), "g": g}]
        if self.kind == "partial":
            return [{"write": unaligned_region(rng, shape, geometry.chunks), "g": g}]
        if self.kind == "resize":
            if rng.random() < 0.4:
                return [{"resize": [rng.randint(1, 2 * s) for s in geometry.shape]}]
            return [{"write": unaligned_region(rng, shape, geometry.chunks), "g": g}]
        if self.kind == "sharded":
            unit = rng.choice([geometry.objects, geometry.chunks])
            region = (aligned_region if rng.random() < 0.6 else unaligned_region)(
                rng, shape, unit)
            return [{"write": region, "g": g}]
        return [{"write": aligned_region(rng, shape, geometry.chunks, 3) if rng.random() < 0.5
                 else unaligned_region(rng, shape, geometry.chunks), "g": g + k}
                for k in range(rng.randint(3, 8))]

    def apply(self, state: np.ndarray[Any, Any], step: Step) -> np.ndarray[Any, Any]:
        if "resize" in step:
            resized = np.full(tuple(step["resize"]), FILL, dtype=state.dtype)
            common = tuple(slice(0, min(a, b)) for a, b in zip(state.shape, resized.shape,
                                                               strict=True))
            resized[common] = state[common]
            return resized
        written = state.copy()
        written[slices(step["write"])] = step["g"]
        return written

    def observe(self, path: Path) -> tuple[Any, list[str]]:
        try:
            data = self._read_with_zarrkit(path)
        except Exception as e:  # noqa: BLE001 - any error is a finding
            return None, [f"zarrkit cannot read the array: {type(e).__name__}: {e}"]
        if self.storage != "directory":  # zarr-python 3 reads neither ZIP nor databases
            return data, []
        return data, _same_as_zarr_python(path, {"a": data})

    def _read_with_zarrkit(self, path: Path) -> np.ndarray[Any, Any]:
        with opened(self.storage, path, "r") as store:
            array = zk.open_group(store, mode="r", consolidated=False)[ARRAY]
            assert isinstance(array, zk.Array)
            if array.dtype != np.dtype("i4") or array.fill_value != FILL:
                raise ValueError(f"metadata changed: dtype {array.dtype}, "
                                 f"fill value {array.fill_value}")
            return np.asarray(array[...])

    def candidates(self, state: Any, returned: list[list[Step]],
                   in_flight: list[Step] | None) -> list[Any]:
        states = super().candidates(state, returned, in_flight)
        for step in in_flight or []:
            if "resize" in step:
                # A shrink clears what falls outside the new shape (chunk by chunk)
                # before it writes the smaller shape: killed in between, the old shape
                # shows each chunk either as it was or already cleared.
                before = states[0]
                cleared = before.copy()
                outside = np.ones(before.shape, dtype=bool)
                outside[tuple(slice(0, n) for n in step["resize"])] = False
                cleared[outside] = FILL
                states.append(cleared)
        return states

    def compare(self, observed: np.ndarray[Any, Any], candidates: list[Any]) -> Verdict:
        old = candidates[0]
        same_shape = [c for c in candidates if c.shape == observed.shape]
        if not same_shape:
            shapes = " or ".join(str(c.shape) for c in candidates)
            return Verdict([f"shape {observed.shape}, expected {shapes}"])
        verdict = Verdict()
        for index, region in object_regions(observed.shape, self.geometry.objects):
            if not any(np.array_equal(observed[region], c[region]) for c in same_shape):
                verdict.failures.append(
                    f"{'shard' if self.geometry.shards else 'chunk'} {index} holds "
                    f"{few_values(observed[region])}; old state "
                    f"{few_values(old[region]) if old.shape == observed.shape else '-'}, "
                    f"states in flight {[few_values(c[region]) for c in same_shape[1:]]}")
        if old.shape == observed.shape:
            unexplained = np.logical_and.reduce([observed != c for c in same_shape])
            verdict.lost = len(set(old[unexplained].tolist()) - {FILL})
        return verdict

    def finish(self, path: Path, state: Any) -> list[str]:
        if self.kind == "resize":
            with opened(self.storage, path, "a") as store:
                return _grow_reveals_fill(store, state,
                                          tuple(2 * s for s in self.geometry.shape))
        if self.zip_store:
            return self._recover_archive(path, state)
        return []

    def _recover_archive(self, path: Path, state: np.ndarray[Any, Any]) -> list[str]:
        """Open the archive for appending and close it, as the next writer would; it must
        still hold the last state seen and leave no temporary files."""
        try:
            open_store("zip", path, "a").close()
        except Exception as e:  # noqa: BLE001 - any error is a finding
            return [f"opening the archive for appending fails: {type(e).__name__}: {e}"]
        failures = [f"{name} left beside the archive" for name in
                    temporary_names(path.parent)]
        failures += zip_archive_problems(path)
        observed, problems = self.observe(path)
        if observed is None:
            return failures + problems
        return failures + self.compare(observed, [state]).failures


class ArrayWriter(Writer):
    """Writes generations into the array; a ZIP writer opens and closes the archive for
    every operation (an append session), the others open their store once."""

    def __init__(self, scenario: ArrayScenario, path: Path) -> None:
        self.scenario = scenario
        self.path = path
        self.array = None if scenario.zip_store else zk.open_array(
            open_store(scenario.storage, path, "a", writer=True), path=ARRAY, mode="r+")

    def plan(self, rng: random.Random, round_no: int, op: int) -> list[Step]:
        shape = self.array.shape if self.array is not None else self.scenario.geometry.shape
        return self.scenario.plan(rng, shape, generation(round_no, op, 0))

    def perform(self, steps: list[Step]) -> None:
        if self.array is not None:
            _perform_array_steps(self.array, steps)
            return
        store = open_store("zip", self.path, "a")
        _perform_array_steps(zk.open_array(store, path=ARRAY, mode="r+"), steps)
        store.close()


def _perform_array_steps(array: zk.Array, steps: list[Step]) -> None:
    for step in steps:
        if "resize" in step:
            array.resize(tuple(step["resize"]))
        else:
            array[slices(step["write"])] = np.int32(step["g"])


def _grow_reveals_fill(store: Any, state: np.ndarray[Any, Any],
                       largest: tuple[int, ...]) -> list[str]:
    """Grow the array to the largest shape any writer could have made: its last state
    must be unchanged and everything outside it must read as the fill value."""
    array = zk.open_array(store, path=ARRAY, mode="r+")
    array.resize(largest)
    grown = np.asarray(array[...])
    inside = tuple(slice(0, n) for n in state.shape)
    outside = np.ones(largest, dtype=bool)
    outside[inside] = False
    failures = []
    if not np.array_equal(grown[inside], state):
        failures.append(f"growing to {largest} changed the elements of the old shape")
    if (grown[outside] != FILL).any():
        count = int((grown[outside] != FILL).sum())
        failures.append(
            f"after growing from {state.shape} to {largest}, {count} elements outside the "
            f"old shape hold {few_values(grown[outside & (grown != FILL)])} instead of the "
            f"fill value: data a shrink removed came back")
    return failures


# --- node documents: attribute updates and consolidated metadata ----------------------------

@dataclass(frozen=True)
class Tree:
    """The nodes as their own documents say (path -> kind and attributes) and the
    consolidated snapshot (path -> the same, the root left out; None if there is none)."""

    live: dict[str, Node]
    snapshot: dict[str, Node] | None


class NodeScenario(Scenario):
    """A group with an array ``a`` and a group ``g``. ``attrs``: the writer updates,
    deletes and replaces attributes of the three nodes. ``consolidated``: it creates nodes
    and changes attributes, and zarrkit itself keeps the snapshot current after it was
    consolidated once (format 2 also calls ``zk.consolidate_metadata`` after each change,
    as zarr-python users do)."""

    def __init__(self, name: str, zarr_format: int, kind: str) -> None:
        super().__init__(name, zarr_format)
        self.kind = kind

    @property
    def consolidated(self) -> bool:
        return self.kind == "consolidated"

    def create(self, path: Path) -> None:
        root = zk.open_group(path, mode="w", zarr_format=self.zarr_format)
        root.create_array("a", shape=(4,), chunks=(2,), dtype="i4", fill_value=FILL)
        root.create_group("g")
        if self.consolidated:
            zk.consolidate_metadata(path)

    def writer(self, path: Path) -> Writer:
        return NodeWriter(self, path)

    def plan(self, rng: random.Random, tree: dict[str, Node], g: int) -> list[Step]:
        paths = sorted(tree)
        if self.kind == "attrs":
            return [self._attribute_step(rng, rng.choice(paths), tree, g)]
        if rng.random() < 0.5:
            parent = rng.choice([p for p in paths if tree[p][0] == "group"])
            step = {"create": f"{parent}/n{g}".lstrip("/"),
                    "kind": rng.choice(["array", "group"]), "attrs": {"gen": g}}
        else:
            step = {"update": rng.choice(paths), "attrs": {"gen": g}}
        return [step, {"consolidate": True}] if self.zarr_format == 2 else [step]

    @staticmethod
    def _attribute_step(rng: random.Random, path: str, tree: dict[str, Node], g: int
                        ) -> Step:
        keys = sorted(tree[path][1])
        choice = rng.random()
        if choice < 0.2 and keys:
            return {"delete": path, "key": rng.choice(keys)}
        if choice < 0.4:
            return {"put": path, "attrs": {"gen": g}}
        return {"update": path, "attrs": {"gen": g, f"k{rng.randrange(4)}": g}}

    def apply(self, state: Tree, step: Step) -> Tree:
        live = dict(state.live)
        snapshot = None if state.snapshot is None else dict(state.snapshot)
        if "consolidate" in step:
            return Tree(live, self._snapshot_of(live))
        path = step.get("create", step.get("update", step.get("put", step.get("delete"))))
        assert isinstance(path, str)
        if "create" in step:
            live[path] = (step["kind"], dict(step["attrs"]))
        else:
            kind, attrs = live[path]
            if "update" in step:
                attrs = {**attrs, **step["attrs"]}
            elif "put" in step:
                attrs = dict(step["attrs"])
            else:
                attrs = {k: v for k, v in attrs.items() if k != step["key"]}
            live[path] = (kind, attrs)
        if snapshot is not None and (path or self.zarr_format == 2):
            # zarrkit records every change in the snapshot (format 3: with any parent an
            # earlier killed writer left out of it; format 2: the root's own documents
            # are in .zmetadata too)
            for recorded in [*ancestors(path)[1:], path]:
                snapshot.setdefault(recorded, live[recorded])
            snapshot[path] = live[path]
        return Tree(live, snapshot)

    def observe(self, path: Path) -> tuple[Any, list[str]]:
        try:
            live = read_tree(path, consolidated=False)
            through_snapshot = read_tree(path, consolidated=True) if self.consolidated else None
        except Exception as e:  # noqa: BLE001 - any error is a finding
            return None, [f"zarrkit cannot read the hierarchy: {type(e).__name__}: {e}"]
        failures = _zarr_python_agrees(path, live, consolidated=False)
        if through_snapshot is None:
            return Tree(live, None), failures
        failures += _zarr_python_agrees(path, through_snapshot, consolidated=True)
        return Tree(live, self._snapshot_of(through_snapshot)), failures

    def _snapshot_of(self, nodes: dict[str, Node]) -> dict[str, Node]:
        """The nodes a snapshot holds: in format 2 the root's documents too (.zmetadata
        has them); in format 3 the root's document holds the snapshot, not the reverse."""
        return {p: node for p, node in nodes.items() if p or self.zarr_format == 2}

    def documents(self, tree: Tree) -> dict[tuple[str, ...], Any]:
        """What each stored document holds. In format 2 a node's kind and its attributes
        are separate documents (.zarray/.zgroup and .zattrs; no attributes = no .zattrs)."""
        documents: dict[tuple[str, ...], Any] = {}
        for path, (kind, attrs) in tree.live.items():
            if self.zarr_format == 3:
                documents[("zarr.json", path)] = (kind, attrs)
                continue
            documents[(".zarray" if kind == "array" else ".zgroup", path)] = kind
            if attrs:
                documents[(".zattrs", path)] = attrs
        if tree.snapshot is not None:
            documents[("snapshot",)] = tree.snapshot
        return documents

    def compare(self, observed: Tree, candidates: list[Any]) -> Verdict:
        seen = self.documents(observed)
        expected = [self.documents(tree) for tree in candidates]
        verdict = Verdict()
        for document in sorted(set(seen).union(*expected)):
            value = seen.get(document)
            if any(states.get(document) == value for states in expected):
                continue
            in_flight = [states.get(document) for states in expected[1:]]
            verdict.failures.append(
                f"document {'/'.join(document)!r} holds {value!r}; "
                f"old {expected[0].get(document)!r}, in flight {in_flight!r}")
            verdict.lost += document in expected[0]
        return verdict


class NodeWriter(Writer):
    def __init__(self, scenario: NodeScenario, path: Path) -> None:
        self.scenario = scenario
        self.path = path

    def plan(self, rng: random.Random, round_no: int, op: int) -> list[Step]:
        tree = read_tree(self.path, consolidated=False, read_arrays=False)
        return self.scenario.plan(rng, tree, generation(round_no, op, 0))

    def perform(self, steps: list[Step]) -> None:
        root = zk.open_group(self.path, mode="r+")
        for step in steps:
            if "consolidate" in step:
                zk.consolidate_metadata(self.path)
            elif "create" in step:
                parent_path, _, name = step["create"].rpartition("/")
                parent = root[parent_path] if parent_path else root
                assert isinstance(parent, zk.Group)
                if step["kind"] == "array":
                    parent.create_array(name, shape=(4,), chunks=(2,), dtype="i4",
                                        fill_value=FILL, attributes=step["attrs"])
                else:
                    parent.create_group(name, attributes=step["attrs"])
            else:
                self._change_attributes(root, step)

    @staticmethod
    def _change_attributes(root: zk.Group, step: Step) -> None:
        path = step.get("update", step.get("put", step.get("delete")))
        node = root[path] if path else root
        if "update" in step:
            node.attrs.update(step["attrs"])
        elif "put" in step:
            node.attrs.put(step["attrs"])
        else:
            del node.attrs[step["key"]]


def read_tree(path: Path, *, consolidated: bool, read_arrays: bool = True) -> dict[str, Node]:
    """Every node zarrkit sees (from the nodes' own documents, or from the consolidated
    snapshot) with its attributes; arrays are read whole, so every chunk must decode."""
    root = zk.open_group(path, mode="r", consolidated=consolidated)
    nodes: dict[str, Node] = {"": ("group", root.attrs.asdict())}
    for name, node in root.members(max_depth=None):
        kind = "array" if isinstance(node, zk.Array) else "group"
        nodes[name] = (kind, node.attrs.asdict())
        if read_arrays and isinstance(node, zk.Array):
            node[...]
    return nodes


# --- set_many: batches of keys written in one transaction (the database stores) ------------

BATCHES = 4
BATCH_KEYS = 8
Generations = tuple[int, ...]  # a BatchScenario's state: the generation of each batch


def batch_keys(batch: int) -> list[str]:
    return [f"b{batch}/{i}" for i in range(BATCH_KEYS)]


ALL_BATCH_KEYS = [key for batch in range(BATCHES) for key in batch_keys(batch)]


def batch_value(key: str, g: int) -> bytes:
    """What a writer stores under ``key`` in generation ``g``: a header naming both, then
    a payload whose size and bytes are drawn from them (empty to 40 kB: values inline in
    a page and values on overflow pages)."""
    rng = random.Random(f"{key}:{g}")
    size = rng.choice([0, rng.randrange(200), rng.randrange(4_000), rng.randrange(40_000)])
    return f"{key} {g} {size}\n".encode() + rng.randbytes(size)


def read_generation(key: str, value: bytes) -> int | None:
    """The generation ``value`` holds if it is exactly what a writer stores under ``key``
    in that generation (else None: garbage, or another key's value)."""
    header, newline, _ = value.partition(b"\n")
    parts = header.decode("ascii", "replace").split(" ")
    if not newline or len(parts) != 3 or parts[0] != key or not parts[1].isdigit():
        return None
    g = int(parts[1])
    return g if batch_value(key, g) == value else None


class BatchScenario(Scenario):
    """``BATCHES`` batches of ``BATCH_KEYS`` keys in a database; each operation is one
    ``store.set_many`` of one to three batches, every value encoding the operation's
    generation. A set_many is one transaction: after a kill, every batch holds one
    generation in all its keys, and the batches of the operation in flight are all old or
    all new."""

    def __init__(self, name: str, storage: str) -> None:
        super().__init__(name, 0, storage=storage)  # no Zarr format: keys and values only

    def create(self, path: Path) -> None:
        with opened(self.storage, path, "w") as store:
            store.set_many({key: batch_value(key, 0) for key in ALL_BATCH_KEYS})

    def writer(self, path: Path) -> Writer:
        return BatchWriter(open_store(self.storage, path, "a", writer=True))

    def apply(self, state: Generations, step: Step) -> Generations:
        return tuple(step["g"] if batch in step["batches"] else g
                     for batch, g in enumerate(state))

    def observe(self, path: Path) -> tuple[Any, list[str]]:
        try:
            with opened(self.storage, path, "r") as store:
                listed = set(store.list())
                values = dict(zip(ALL_BATCH_KEYS, store.get_many(ALL_BATCH_KEYS),
                                  strict=True))
        except Exception as e:  # noqa: BLE001 - any error is a finding
            return None, [f"zarrkit cannot read the database: {type(e).__name__}: {e}"]
        failures = []
        if listed != set(ALL_BATCH_KEYS):
            failures.append(f"store.list() misses {sorted(set(ALL_BATCH_KEYS) - listed)} "
                            f"and shows {sorted(listed - set(ALL_BATCH_KEYS))} too")
        state = []
        for batch in range(BATCHES):
            found: dict[str, int | None] = {}
            for key in batch_keys(batch):
                value = values[key]
                found[key] = None if value is None else read_generation(key, value)
                if found[key] is None:
                    failures.append(f"key {key!r} holds " + (
                        "nothing" if value is None else f"garbage {bytes(value[:40])!r}"))
            generations = {g for g in found.values() if g is not None}
            if len(generations) > 1:
                failures.append(f"batch {batch} is torn: its keys hold generations "
                                f"{list(found.values())}")
            state.append(max(generations, default=-1))
        return tuple(state), failures

    def compare(self, observed: Generations, candidates: list[Any]) -> Verdict:
        if observed in candidates:
            return Verdict()
        lost = sum(observed[batch] not in {c[batch] for c in candidates}
                   for batch in range(BATCHES))
        return Verdict([f"the batches hold generations {list(observed)}; old "
                        f"{list(candidates[0])}, in flight {[list(c) for c in candidates[1:]]}"
                        + ("" if lost else " (a set_many written in part)")], lost)


class BatchWriter(Writer):
    def __init__(self, store: Any) -> None:
        self.store = store

    def plan(self, rng: random.Random, round_no: int, op: int) -> list[Step]:
        batches = sorted(rng.sample(range(BATCHES), rng.randint(1, 3)))
        return [{"batches": batches, "g": generation(round_no, op, 0)}]

    def perform(self, steps: list[Step]) -> None:
        for step in steps:
            self.store.set_many({key: batch_value(key, step["g"])
                                 for batch in step["batches"] for key in batch_keys(batch)})


# --- zarr-python as a second reader ---------------------------------------------------------

def _zarr_python_group(path: Path, consolidated: bool) -> Any:
    import zarr

    return zarr.open_group(str(path), mode="r", use_consolidated=consolidated)


def _same_as_zarr_python(path: Path, arrays: dict[str, np.ndarray[Any, Any]]) -> list[str]:
    """Read the arrays with zarr-python: it must succeed and agree with zarrkit."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            group = _zarr_python_group(path, consolidated=False)
            found = {name: np.asarray(group[name][...]) for name in arrays}
    except Exception as e:  # noqa: BLE001 - any error is a finding
        return [f"zarr-python cannot read the store: {type(e).__name__}: {e}"]
    return [f"zarr-python reads array {name!r} differently" for name, data in arrays.items()
            if not np.array_equal(found[name], data)]


def _zarr_python_agrees(path: Path, nodes: dict[str, Node], *, consolidated: bool
                        ) -> list[str]:
    """Open every node with zarr-python (through the snapshot, if ``consolidated``): it
    must succeed and see the same nodes and attributes as zarrkit."""
    how = "through the snapshot" if consolidated else "from the nodes' documents"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seen = _zarr_python_tree(path, consolidated)
    except Exception as e:  # noqa: BLE001 - any error is a finding
        return [f"zarr-python cannot read the hierarchy {how}: {type(e).__name__}: {e}"]
    if consolidated:
        # zarr-python 3.1 reads a format-2 root's attributes from its .zattrs even when
        # consolidated (zarrkit, like zarr-python 2, from .zmetadata): they differ while a
        # writer killed between the two leaves .zmetadata one change behind.
        seen = {**seen, "": nodes[""]}
    if seen != nodes:
        return [f"zarr-python sees {seen!r} {how}; zarrkit sees {nodes!r}"]
    return []


def _zarr_python_tree(path: Path, consolidated: bool) -> dict[str, Node]:
    import zarr

    group = _zarr_python_group(path, consolidated)
    nodes: dict[str, Node] = {"": ("group", dict(group.attrs))}
    for name, node in group.members(max_depth=None):
        is_array = isinstance(node, zarr.Array)
        nodes[name] = ("array" if is_array else "group", dict(node.attrs))
        if is_array:
            node[...]
    return nodes


# --- store-level checks ------------------------------------------------------------------

TEMP_PREFIX = ".zarrkit-tmp-"  # the documented prefix of zarrkit's temporary files


def temporary_names(directory: Path) -> list[str]:
    """Names under ``directory`` (walked) that look like temporary files."""
    return [os.path.join(d, n) for d, dirs, files in os.walk(directory)
            for n in files + dirs if n.startswith(TEMP_PREFIX) or n.endswith(".partial")]


def zip_archive_problems(path: Path) -> list[str]:
    """Python's zipfile must open the archive and find every member's CRC right."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except Exception as e:  # noqa: BLE001 - any error is a finding
        return [f"zipfile cannot open the archive: {type(e).__name__}: {e}"]
    return [] if bad is None else [f"member {bad!r} of the archive fails its CRC check"]


SCENARIOS: dict[str, Scenario] = {
    scenario.name: scenario for scenario in [
        ArrayScenario("chunks-v2", 2, "full"),
        ArrayScenario("chunks-v3", 3, "full"),
        ArrayScenario("partial-v2", 2, "partial"),
        ArrayScenario("partial-v3", 3, "partial"),
        ArrayScenario("resize-v2", 2, "resize"),
        ArrayScenario("resize-v3", 3, "resize"),
        ArrayScenario("sharded-v3", 3, "sharded", SHARDED),
        NodeScenario("attrs-v2", 2, "attrs"),
        NodeScenario("attrs-v3", 3, "attrs"),
        NodeScenario("consolidated-v2", 2, "consolidated"),
        NodeScenario("consolidated-v3", 3, "consolidated"),
        ArrayScenario("zip-v2", 2, "zip", ARCHIVED),
        ArrayScenario("zip-v3", 3, "zip", ARCHIVED),
        *[scenario for database in DATABASES for scenario in [
            ArrayScenario(f"{database}-chunks-v2", 2, "full", storage=database),
            ArrayScenario(f"{database}-chunks-v3", 3, "full", storage=database),
            ArrayScenario(f"{database}-partial-v2", 2, "partial", storage=database),
            ArrayScenario(f"{database}-partial-v3", 3, "partial", storage=database),
            ArrayScenario(f"{database}-resize-v2", 2, "resize", storage=database),
            ArrayScenario(f"{database}-resize-v3", 3, "resize", storage=database),
            ArrayScenario(f"{database}-sharded-v3", 3, "sharded", SHARDED, database),
            BatchScenario(f"{database}-batches", database),
        ]],
    ]
}
