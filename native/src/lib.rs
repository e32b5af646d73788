//! `zarrkit._engine`: zarrkit's native chunk engine.
//!
//! One call per batch, the GIL released for all of it: decode chunks (or the inner chunks
//! of shards) and scatter them into a numpy array (`decode_into`, `decode_shards_into`), or
//! encode chunks and whole shards (`encode_batch`). See `src/zarrkit/_engine.pyi`.
//!
//! This file is the boundary with Python: it turns arguments into plain Rust values
//! (pointers into buffers and arrays that it keeps referenced until the call returns),
//! releases the GIL, and maps errors to exceptions.

mod blosc_zstd;
mod chain;
mod codecs;
mod engine;
mod files;
mod grid;
mod json;
mod points;
mod strided;

use std::sync::Arc;

use numpy::npyffi;
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PySlice, PySliceMethods, PyTuple};

use engine::{InnerTask, Outcome, Region, ShardTask, Source, Task, TaskError};
use strided::{Dim, InArray, OutArray};

create_exception!(
    _engine,
    ChunkDecodeError,
    PyValueError,
    "A stored chunk or shard is corrupt or does not fit its array (the message starts with its key)."
);
create_exception!(
    _engine,
    ChunkReadError,
    PyOSError,
    "A chunk's file could not be read (the message starts with its key)."
);

fn to_py(e: TaskError) -> PyErr {
    match e {
        TaskError::Decode(m) => ChunkDecodeError::new_err(m),
        TaskError::Read(m) => ChunkReadError::new_err(m),
        TaskError::Value(m) => PyValueError::new_err(m),
    }
}

/// A codec chain the engine covers, parsed once from its description JSON.
#[pyclass(frozen, module = "zarrkit._engine", name = "Chain")]
struct PyChain {
    inner: Arc<chain::Chain>,
    description: String,
}

#[pymethods]
impl PyChain {
    #[new]
    fn new(description_json: &str, fill: &[u8]) -> PyResult<Self> {
        match chain::Chain::parse(description_json, fill) {
            Ok(c) => Ok(PyChain { inner: Arc::new(c), description: description_json.to_owned() }),
            Err(chain::ParseError::Unsupported(m)) => {
                Err(PyValueError::new_err(format!("unsupported: {m}")))
            }
            Err(chain::ParseError::Invalid(m)) => {
                Err(PyValueError::new_err(format!("invalid chain description: {m}")))
            }
        }
    }

    #[getter]
    fn itemsize(&self) -> usize {
        self.inner.itemsize
    }

    #[getter]
    fn chunk_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.chunk_shape)
    }

    #[getter]
    fn sharded(&self) -> bool {
        matches!(self.inner.kind, chain::Kind::Sharded(_))
    }

    #[getter]
    fn inner_shape<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        match &self.inner.kind {
            chain::Kind::Sharded(s) => Ok(Some(PyTuple::new(py, &s.inner.shape)?)),
            chain::Kind::Plain(_) => Ok(None),
        }
    }

    #[getter]
    fn fill<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.fill)
    }

    fn __repr__(&self) -> String {
        format!("Chain({:?})", self.description)
    }
}

/// Python objects (and buffers) that must stay alive, and unmoved, while the GIL is
/// released: dropped only after the batch is done.
#[derive(Default)]
struct Keep {
    buffers: Vec<PyUntypedBuffer>,
    objects: Vec<Py<PyAny>>,
}

fn sel(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Dim>> {
    let triples: Vec<(i64, i64, i64)> = obj.extract().map_err(|_| {
        PyValueError::new_err(format!("{what} must be a tuple of (start, stop, step) tuples"))
    })?;
    triples
        .into_iter()
        .map(|(a, b, c)| {
            Dim::from_triple(a, b, c).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{what}: ({a}, {b}, {c}) needs non-negative bounds and a positive step"
                ))
            })
        })
        .collect()
}

fn source(obj: &Bound<'_, PyAny>, keep: &mut Keep) -> PyResult<Source> {
    if let Ok(t) = obj.cast::<PyTuple>() {
        if t.len() == 5 {
            let (fd, name, offset, length, crc32): (i32, String, u64, u64, Option<u32>) =
                t.extract().map_err(|_| {
                    PyValueError::new_err(
                        "a descriptor source is (fd: int, name: str, offset: int, \
                         length: int, crc32: int | None)",
                    )
                })?;
            if offset.checked_add(length).is_none() {
                return Err(PyValueError::new_err("file range overflows"));
            }
            return Ok(Source::Descriptor { fd, name, offset, length, crc32 });
        }
        let (path, offset, length): (String, u64, Option<u64>) = t.extract().map_err(|_| {
            PyValueError::new_err(
                "a file source is (path: str, offset: int, length: int | None)",
            )
        })?;
        if offset.checked_add(length.unwrap_or(0)).is_none() {
            return Err(PyValueError::new_err("file range overflows"));
        }
        return Ok(Source::File { path, offset, length });
    }
    let buf = PyUntypedBuffer::get(obj)?;
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err("a chunk's bytes must be a contiguous buffer"));
    }
    let src = Source::Memory { ptr: buf.buf_ptr() as *const u8, len: buf.len_bytes() };
    keep.buffers.push(buf);
    Ok(src)
}

fn array_layout(
    a: &Bound<'_, PyUntypedArray>,
) -> PyResult<(*mut u8, Vec<usize>, Vec<isize>, usize)> {
    if a.dtype().has_object() {
        return Err(PyValueError::new_err("arrays of Python objects are not for the engine"));
    }
    // SAFETY: a valid PyArrayObject (the cast checked its type).
    let data = unsafe { (*a.as_array_ptr()).fields.data } as *mut u8;
    Ok((data, a.shape().to_vec(), a.strides().to_vec(), a.dtype().itemsize()))
}

fn out_array(out: &Bound<'_, PyAny>, itemsize: usize, keep: &mut Keep) -> PyResult<OutArray> {
    let a = out
        .cast::<PyUntypedArray>()
        .map_err(|_| PyValueError::new_err("out must be a numpy array"))?;
    // SAFETY: reading the flags of a valid array object.
    let flags = unsafe { (*a.as_array_ptr()).fields.flags };
    if flags & npyffi::NPY_ARRAY_WRITEABLE == 0 {
        return Err(PyValueError::new_err("out must be writable"));
    }
    let (ptr, shape, strides, size) = array_layout(a)?;
    if size != itemsize {
        return Err(PyValueError::new_err(format!(
            "out has items of {size} bytes, the chain {itemsize}"
        )));
    }
    keep.objects.push(out.clone().unbind());
    Ok(OutArray { ptr, shape, strides, itemsize })
}

fn tuple_items<'py>(obj: &Bound<'py, PyAny>, n: usize, what: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let t = obj
        .cast::<PyTuple>()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a tuple of {n} items")))?;
    if t.len() != n {
        return Err(PyValueError::new_err(format!("{what} must be a tuple of {n} items")));
    }
    Ok(t.iter().collect())
}

/// (indices of missing, indices of deferred) from the outcome of each task.
fn outcome_lists(outcomes: &[Outcome]) -> (Vec<usize>, Vec<usize>) {
    let pick = |want: Outcome| {
        outcomes.iter().enumerate().filter(|(_, &o)| o == want).map(|(i, _)| i).collect()
    };
    (pick(Outcome::Missing), pick(Outcome::Deferred))
}

/// Decode every task's chunk and copy its selected region into `out`.
///
/// tasks: list of (key, source, chunk_sel, out_sel); see the stub for the details.
#[pyfunction]
fn decode_into(
    py: Python<'_>,
    chain: &PyChain,
    out: &Bound<'_, PyAny>,
    tasks: &Bound<'_, PyList>,
    threads: usize,
) -> PyResult<(Vec<usize>, Vec<usize>)> {
    let mut keep = Keep::default();
    let out = out_array(out, chain.inner.itemsize, &mut keep)?;
    let mut list = Vec::with_capacity(tasks.len());
    for item in tasks.iter() {
        let parts = tuple_items(&item, 4, "a task")?;
        let key: String = parts[0].extract()?;
        list.push(Task {
            source: source(&parts[1], &mut keep)?,
            regions: vec![Region {
                chunk_sel: sel(&parts[2], "chunk_sel")?,
                out_sel: sel(&parts[3], "out_sel")?,
            }],
            key,
        });
    }
    let c = chain.inner.clone();
    let result = py.detach(|| engine::decode_into(&c, &out, &list, threads));
    drop(keep);
    result.map(|o| outcome_lists(&o)).map_err(to_py)
}

/// Decode the requested inner chunks of every shard into `out`; missing ones are filled.
///
/// shard_tasks: list of (key, source, inner), inner a list of (coords, chunk_sel, out_sel).
#[pyfunction]
fn decode_shards_into(
    py: Python<'_>,
    chain: &PyChain,
    out: &Bound<'_, PyAny>,
    shard_tasks: &Bound<'_, PyList>,
    threads: usize,
) -> PyResult<(Vec<usize>, Vec<usize>)> {
    let mut keep = Keep::default();
    let out = out_array(out, chain.inner.itemsize, &mut keep)?;
    let mut list = Vec::with_capacity(shard_tasks.len());
    for item in shard_tasks.iter() {
        let parts = tuple_items(&item, 3, "a shard task")?;
        let key: String = parts[0].extract()?;
        let src = source(&parts[1], &mut keep)?;
        let mut inner = Vec::new();
        for entry in parts[2].try_iter()? {
            let entry = entry?;
            let e = tuple_items(&entry, 3, "an inner task")?;
            let coords: Vec<usize> = e[0].extract().map_err(|_| {
                PyValueError::new_err("inner chunk coordinates must be non-negative integers")
            })?;
            inner.push(InnerTask {
                coords,
                regions: vec![Region {
                    chunk_sel: sel(&e[1], "chunk_sel")?,
                    out_sel: sel(&e[2], "out_sel")?,
                }],
            });
        }
        list.push(ShardTask { key, source: src, inner });
    }
    let c = chain.inner.clone();
    let result = py.detach(|| engine::decode_shards_into(&c, &out, &list, threads));
    drop(keep);
    result.map(|o| outcome_lists(&o)).map_err(to_py)
}

fn one_sel(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Dim> {
    let (a, b, c): (i64, i64, i64) = obj
        .extract()
        .map_err(|_| PyValueError::new_err(format!("{what} must be (start, stop, step)")))?;
    Dim::from_triple(a, b, c).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{what}: ({a}, {b}, {c}) needs non-negative bounds and a positive step"
        ))
    })
}

/// Read the product of per-dimension pieces of a regular chunk grid from files.
///
/// dims: per dimension, a list of (chunk index, chunk part, output part[, anything]), in
/// ascending chunk order (several pieces of one chunk together); files are `root + key_prefix + indices joined by separator`. Returns (number of
/// chunks or shards missing, coordinates of those left to the caller).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn decode_grid_into(
    py: Python<'_>,
    chain: &PyChain,
    out: &Bound<'_, PyAny>,
    dims: &Bound<'_, PyList>,
    root: String,
    key_prefix: String,
    separator: String,
    threads: usize,
) -> PyResult<(usize, Vec<Vec<usize>>)> {
    let mut keep = Keep::default();
    let out = out_array(out, chain.inner.itemsize, &mut keep)?;
    let parsed = grid_dims(dims, piece_lens(&chain.inner), &out.shape)?;
    let files = grid::Files { root, keys: grid::ChunkKeys { prefix: key_prefix, separator } };
    let c = chain.inner.clone();
    let result = py.detach(|| grid::decode_grid_into(&c, &out, &parsed, &files, threads));
    drop(keep);
    let r = result.map_err(to_py)?;
    Ok((r.missing, r.deferred))
}

/// One side of a grid piece along a dimension of `len` indices: an integer (one index), a
/// slice with a positive step (a basic plan's own), or a `(start, stop, step)` triple.
fn piece_part(obj: &Bound<'_, PyAny>, len: usize, what: &str) -> PyResult<Dim> {
    if let Ok(slice) = obj.cast::<PySlice>() {
        let length = isize::try_from(len)
            .map_err(|_| PyValueError::new_err(format!("{what}: a dimension too long")))?;
        let i = slice.indices(length)?;
        if i.step < 1 {
            return Err(PyValueError::new_err(format!("{what}: a slice needs a positive step")));
        }
        let count = i.slicelength;
        return Ok(Dim { start: i.start as usize, step: i.step as usize, count });
    }
    if let Ok(index) = obj.extract::<usize>() {
        return Ok(Dim { start: index, step: 1, count: 1 });
    }
    one_sel(obj, what)
}

/// A grid read's pieces: per dimension, (chunk index, chunk part, output part[, anything])
/// tuples (a basic plan's pieces as they are), the output part None for an integer's
/// length-1 axis. `chunk_lens` and `out_shape` bound the slices.
fn grid_dims(
    dims: &Bound<'_, PyList>,
    chunk_lens: &[usize],
    out_shape: &[usize],
) -> PyResult<Vec<Vec<grid::Piece>>> {
    if dims.len() != chunk_lens.len() || dims.len() != out_shape.len() {
        return Err(PyValueError::new_err(format!(
            "{} dimensions of pieces for chunks of {} and an output of {}",
            dims.len(),
            chunk_lens.len(),
            out_shape.len()
        )));
    }
    let mut parsed = Vec::with_capacity(dims.len());
    for (d, dim) in dims.iter().enumerate() {
        let mut pieces = Vec::new();
        for item in dim.try_iter()? {
            let item = item?;
            let t = item
                .cast::<PyTuple>()
                .map_err(|_| PyValueError::new_err("a piece must be a tuple"))?;
            if t.len() != 3 && t.len() != 4 {
                return Err(PyValueError::new_err("a piece must be a tuple of 3 or 4 items"));
            }
            let out_part = t.get_item(2)?;
            pieces.push(grid::Piece {
                index: t.get_item(0)?.extract().map_err(|_| {
                    PyValueError::new_err("a chunk index must be a non-negative integer")
                })?,
                chunk_sel: piece_part(&t.get_item(1)?, chunk_lens[d], "chunk_sel")?,
                out_sel: if out_part.is_none() {
                    Dim { start: 0, step: 1, count: 1 }
                } else {
                    piece_part(&out_part, out_shape[d], "out_sel")?
                },
            });
        }
        parsed.push(pieces);
    }
    Ok(parsed)
}

/// The length of a chain's chunks (inner chunks, for a sharded one) along each dimension.
fn piece_lens(chain: &chain::Chain) -> &[usize] {
    match &chain.kind {
        chain::Kind::Plain(p) => &p.shape,
        chain::Kind::Sharded(sh) => &sh.inner.shape,
    }
}

/// A grid read (as ``decode_grid_into``) of a plain chain from a store whose values Python
/// fetches: the engine names every chunk of the box, calls ``fetch(keys)`` once for their
/// values (each a buffer, a file or descriptor source, or None when not stored), and reads
/// them. Returns (chunks missing, coordinates of those left to the caller: none).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn decode_grid_values_into(
    py: Python<'_>,
    chain: &PyChain,
    out: &Bound<'_, PyAny>,
    dims: &Bound<'_, PyList>,
    fetch: &Bound<'_, PyAny>,
    key_prefix: String,
    separator: String,
    threads: usize,
) -> PyResult<(usize, Vec<Vec<usize>>)> {
    let mut keep = Keep::default();
    let out = out_array(out, chain.inner.itemsize, &mut keep)?;
    if !matches!(chain.inner.kind, chain::Kind::Plain(_)) {
        return Err(PyValueError::new_err("a sharded chain: its values are read by shard"));
    }
    let parsed = grid_dims(dims, piece_lens(&chain.inner), &out.shape)?;
    let names = grid::ChunkKeys { prefix: key_prefix, separator };
    let chunks = grid::box_chunks(&parsed, &names).map_err(to_py)?;
    let fetched = fetch.call1((PyList::new(py, &chunks.keys)?,))?;
    let mut values = Vec::with_capacity(chunks.keys.len());
    for value in fetched.try_iter()? {
        let value = value?;
        values.push(if value.is_none() { None } else { Some(source(&value, &mut keep)?) });
    }
    keep.objects.push(fetched.unbind());
    let c = chain.inner.clone();
    let result = py.detach(|| grid::decode_values_into(&c, &out, chunks, values, threads));
    drop(keep);
    let r = result.map_err(to_py)?;
    Ok((r.missing, r.deferred))
}

/// The points' coordinate arrays as slices (each must be contiguous).
fn coordinate_slices<'a>(coords: &'a [numpy::PyReadonlyArray1<'_, i64>]) -> PyResult<Vec<&'a [i64]>> {
    coords
        .iter()
        .map(|a| a.as_slice().map_err(|_| PyValueError::new_err("coordinates must be contiguous")))
        .collect()
}

/// Pointwise read (``vindex``) from chunk files: ``coords`` one int64 array per dimension
/// (the points, in output order), ``out`` 1-d. Returns (chunks missing, chunks deferred).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn decode_points_into(
    py: Python<'_>,
    chain: &PyChain,
    out: &Bound<'_, PyAny>,
    coords: Vec<numpy::PyReadonlyArray1<'_, i64>>,
    array_shape: Vec<usize>,
    root: String,
    key_prefix: String,
    separator: String,
    threads: usize,
) -> PyResult<(usize, Vec<Vec<usize>>)> {
    let mut keep = Keep::default();
    let out = out_array(out, chain.inner.itemsize, &mut keep)?;
    let slices = coordinate_slices(&coords)?;
    let files = grid::Files { root, keys: grid::ChunkKeys { prefix: key_prefix, separator } };
    let c = chain.inner.clone();
    let result = py.detach(|| {
        points::decode_points_into(&c, &out, &slices, &array_shape, &files, threads)
    });
    drop(keep);
    let r = result.map_err(to_py)?;
    Ok((r.missing, r.deferred))
}

/// Pointwise read (as ``decode_points_into``) from a store whose values Python fetches:
/// the engine groups the points by chunk, calls ``fetch(keys)`` once for the values of the
/// chunks they touch (each a buffer, a file or descriptor source, or None when not
/// stored), and copies every point's item. Returns (chunks missing, chunks deferred: none).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn decode_points_values_into(
    py: Python<'_>,
    chain: &PyChain,
    out: &Bound<'_, PyAny>,
    coords: Vec<numpy::PyReadonlyArray1<'_, i64>>,
    array_shape: Vec<usize>,
    fetch: &Bound<'_, PyAny>,
    key_prefix: String,
    separator: String,
    threads: usize,
) -> PyResult<(usize, Vec<Vec<usize>>)> {
    let mut keep = Keep::default();
    let out = out_array(out, chain.inner.itemsize, &mut keep)?;
    let slices = coordinate_slices(&coords)?;
    let c = chain.inner.clone();
    let points = py
        .detach(|| points::group_points(&c, &out, &slices, &array_shape, threads))
        .map_err(to_py)?;
    let names = grid::ChunkKeys { prefix: key_prefix, separator };
    let keys: Vec<String> = points.coords().map(|coords| names.key(coords)).collect();
    let fetched = fetch.call1((PyList::new(py, &keys)?,))?;
    let mut values = Vec::with_capacity(keys.len());
    for value in fetched.try_iter()? {
        let value = value?;
        values.push(if value.is_none() { None } else { Some(source(&value, &mut keep)?) });
    }
    keep.objects.push(fetched.unbind());
    let result = py.detach(|| {
        points::read_points(&c, &out, &slices, &points, &names, values, threads)
    });
    drop(keep);
    let r = result.map_err(to_py)?;
    Ok((r.missing, r.deferred))
}

/// Read whole files in parallel: bytes, None for a missing file (or a directory), or
/// False for a symbolic link, which is never followed (the caller's store reads it).
#[pyfunction]
fn read_files<'py>(py: Python<'py>, paths: Vec<String>, threads: usize) -> PyResult<Bound<'py, PyList>> {
    let result = py.detach(|| engine::read_files(&paths, threads)).map_err(to_py)?;
    let items: Vec<Bound<'py, PyAny>> = result
        .into_iter()
        .map(|r| match r {
            Ok(Some(data)) => PyBytes::new(py, &data).into_any(),
            Ok(None) => py.None().into_bound(py),
            Err(_) => pyo3::types::PyBool::new(py, false).to_owned().into_any(),
        })
        .collect();
    PyList::new(py, items)
}

/// The numpy arrays of `chunks` as the engine's inputs, each kept alive in `keep`.
fn chunk_arrays(chunks: &Bound<'_, PyList>, keep: &mut Keep) -> PyResult<Vec<InArray>> {
    let mut arrays = Vec::with_capacity(chunks.len());
    for item in chunks.iter() {
        let a = item
            .cast::<PyUntypedArray>()
            .map_err(|_| PyValueError::new_err("chunks must be numpy arrays"))?;
        let (ptr, shape, strides, itemsize) = array_layout(a)?;
        arrays.push(InArray { ptr, shape, strides, itemsize });
        keep.objects.push(item.clone().unbind());
    }
    Ok(arrays)
}

/// Encode whole chunks (or whole shards, for a sharding chain).
///
/// Returns one item per chunk: the encoded bytes, or None when `skip_fill` and every
/// element equals the fill value bitwise (for shards: when every inner chunk does).
#[pyfunction]
fn encode_batch<'py>(
    py: Python<'py>,
    chain: &PyChain,
    chunks: &Bound<'py, PyList>,
    threads: usize,
    skip_fill: bool,
) -> PyResult<Bound<'py, PyList>> {
    let mut keep = Keep::default();
    let arrays = chunk_arrays(chunks, &mut keep)?;
    let c = chain.inner.clone();
    let result = py.detach(|| engine::encode_batch(&c, &arrays, threads, skip_fill));
    drop(keep);
    let encoded = result.map_err(to_py)?;
    let items: Vec<Option<Bound<'py, PyBytes>>> =
        encoded.iter().map(|e| e.as_ref().map(|v| PyBytes::new(py, v))).collect();
    PyList::new(py, items)
}

/// Encode whole chunks as `encode_batch` does and store each in its file, as a
/// DirectoryStore stores a value: a new temporary file (`temp_prefix` + the chunk's index,
/// in `temp_directory`, or beside its target when None) renamed over `targets[i]`, the
/// target's missing directories made. All with the GIL released.
///
/// Returns one item per chunk: None when stored, False when every element equals the fill
/// value (`skip_fill`: nothing written, the caller deletes the key), or the encoded bytes
/// when the file could not be written (the caller stores them through its store).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn encode_to_files<'py>(
    py: Python<'py>,
    chain: &PyChain,
    chunks: &Bound<'py, PyList>,
    targets: Vec<String>,
    temp_directory: Option<String>,
    temp_prefix: String,
    threads: usize,
    skip_fill: bool,
) -> PyResult<Bound<'py, PyList>> {
    let mut keep = Keep::default();
    let arrays = chunk_arrays(chunks, &mut keep)?;
    let c = chain.inner.clone();
    if targets.len() != arrays.len() {
        return Err(PyValueError::new_err(format!(
            "{} chunks for {} files", arrays.len(), targets.len()
        )));
    }
    let files = files::FileTargets { targets, temp_directory, temp_prefix };
    let result = py.detach(|| {
        engine::encode_then(&c, &arrays, threads, skip_fill, |i, value| {
            files::store_one(&files, i, value)
        })
    });
    drop(keep);
    let stored = result.map_err(to_py)?;
    let items = stored.into_iter().map(|s| -> Bound<'py, PyAny> {
        match s {
            files::Stored::Written => py.None().into_bound(py),
            files::Stored::Fill => pyo3::types::PyBool::new(py, false).to_owned().into_any(),
            files::Stored::Unwritten(data) => PyBytes::new(py, &data).into_any(),
        }
    });
    PyList::new(py, items)
}

/// `(deepest nesting of arrays and objects, longest run of digits, span)` of a JSON text,
/// the first two outside strings: the metadata loader's depth limit and its test for
/// integers the fast parser cannot keep exact, in one pass (the GIL released for a long
/// text). `span` is `(start, end)` of the value of the top-level member named `member`
/// (spelt without escapes), or None: a loader can leave a large member unparsed.
#[pyfunction]
#[pyo3(signature = (data, member=None))]
fn json_scan(py: Python<'_>, data: &[u8], member: Option<&str>
) -> (usize, usize, Option<(usize, usize)>) {
    let name = member.map(str::as_bytes);
    let found = if data.len() < 1 << 16 {
        json::scan(data, name)
    } else {
        py.detach(|| json::scan(data, name))
    };
    (found.deepest, found.longest_digits, found.member)
}

/// The versions of the C libraries this build carries.
#[pyfunction]
fn versions() -> Vec<(String, String)> {
    // SAFETY: static strings of the libraries.
    let blosc = unsafe { std::ffi::CStr::from_ptr(blosc_src::blosc_get_version_string()) };
    vec![
        ("engine".into(), env!("CARGO_PKG_VERSION").into()),
        ("c-blosc".into(), blosc.to_string_lossy().into_owned()),
        ("zstd".into(), zstd_safe::version_number().to_string()),
    ]
}

/// How many of c-blosc's zstd calls went to the engine's per-thread contexts (0 where the
/// linker could not send them there: they then build a context per block, as c-blosc does).
#[pyfunction]
fn blosc_zstd_calls() -> u64 {
    blosc_zstd::wrapped_calls()
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChain>()?;
    m.add_function(wrap_pyfunction!(decode_into, m)?)?;
    m.add_function(wrap_pyfunction!(decode_grid_values_into, m)?)?;
    m.add_function(wrap_pyfunction!(decode_shards_into, m)?)?;
    m.add_function(wrap_pyfunction!(decode_grid_into, m)?)?;
    m.add_function(wrap_pyfunction!(encode_batch, m)?)?;
    m.add_function(wrap_pyfunction!(encode_to_files, m)?)?;
    m.add_function(wrap_pyfunction!(read_files, m)?)?;
    m.add_function(wrap_pyfunction!(decode_points_into, m)?)?;
    m.add_function(wrap_pyfunction!(decode_points_values_into, m)?)?;
    m.add_function(wrap_pyfunction!(versions, m)?)?;
    m.add_function(wrap_pyfunction!(json_scan, m)?)?;
    m.add_function(wrap_pyfunction!(blosc_zstd_calls, m)?)?;
    m.add("ChunkDecodeError", m.py().get_type::<ChunkDecodeError>())?;
    m.add("ChunkReadError", m.py().get_type::<ChunkReadError>())?;
    Ok(())
}
