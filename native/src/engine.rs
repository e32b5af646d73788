//! Batches: decode chunks (plain or sharded) and scatter them into an output array, and
//! encode chunks or whole shards, in parallel on a rayon pool of the caller's size.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use crate::chain::{coords_repr, Chain, Kind, Plain, Sharded, EMPTY};
use crate::strided::{self, Dim, InArray, OutArray};

/// An error of one task, its message starting with the task's key.
#[derive(Debug)]
pub enum TaskError {
    /// Corrupt or inconsistent stored bytes.
    Decode(String),
    /// A file could not be read.
    Read(String),
    /// A task's arguments do not fit the chain or the output.
    Value(String),
}

/// Bytes of one chunk or shard: memory borrowed from a Python buffer, a file range
/// (`length` None: to the end of the file), or a range of a file the caller holds open
/// (a stored ZIP member: `fd` is the archive's descriptor, `name` its path for messages,
/// `crc32` the member's checksum, checked when the member is read whole).
#[derive(Debug, Clone)]
pub enum Source {
    Memory { ptr: *const u8, len: usize },
    File { path: String, offset: u64, length: Option<u64> },
    Descriptor { fd: i32, name: String, offset: u64, length: u64, crc32: Option<u32> },
}

/// What became of a task whose source is a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Decoded (or, for a shard, its index read and its inner chunks decoded).
    Read,
    /// No such file (or a directory): not stored, its region filled with the fill value.
    Missing,
    /// The file is a symbolic link, which the engine never follows: nothing was written,
    /// and the caller reads it through its store, which knows where links may lead.
    Deferred,
}

// SAFETY: `Memory` points into a Python buffer held (and so kept alive and unmoved) for
// the whole call; it is only read.
unsafe impl Send for Source {}
unsafe impl Sync for Source {}

impl Source {
    /// The memory of a `Memory` source.
    fn memory(&self) -> Option<&[u8]> {
        match self {
            // SAFETY: see the Send impl: a live, C-contiguous buffer of `len` bytes.
            Source::Memory { ptr, len } => Some(unsafe { std::slice::from_raw_parts(*ptr, *len) }),
            Source::File { .. } | Source::Descriptor { .. } => None,
        }
    }

    /// The file (path) and the offset in it of a file or descriptor source.
    fn place(&self) -> (&str, u64) {
        match self {
            Source::File { path, offset, .. } => (path, *offset),
            Source::Descriptor { name, offset, .. } => (name, *offset),
            Source::Memory { .. } => ("memory", 0),
        }
    }

    /// Check the bytes of a whole descriptor source against its checksum.
    fn check_whole(&self, data: &[u8]) -> Result<(), String> {
        if let Source::Descriptor { name, crc32: Some(expected), .. } = self {
            let mut crc = flate2::Crc::new();
            crc.update(data);
            if crc.sum() != *expected {
                return Err(format!("{name}: bad CRC-32 of a member"));
            }
        }
        Ok(())
    }

}

/// One box a task copies: what it takes of the chunk and where that goes in the output.
/// A chunk of a basic selection has one; of an orthogonal selection whose index lists fall
/// into it in several runs, one per combination of those runs (the chunk decoded once).
#[derive(Debug, Clone)]
pub struct Region {
    pub chunk_sel: Vec<Dim>,
    pub out_sel: Vec<Dim>,
}

impl Region {
    fn is_empty(&self) -> bool {
        self.chunk_sel.iter().any(|d| d.count == 0)
    }
}

pub struct Task {
    pub key: String,
    pub source: Source,
    pub regions: Vec<Region>,
}

pub struct InnerTask {
    pub coords: Vec<usize>,
    pub regions: Vec<Region>,
}

pub struct ShardTask {
    pub key: String,
    pub source: Source,
    pub inner: Vec<InnerTask>,
}

// --- thread pools ---------------------------------------------------------------------------

type Pools = HashMap<(u32, usize), Arc<rayon::ThreadPool>>;

/// The pool of `threads` threads, made once per size (and per process: a forked child
/// does not inherit the parent's threads, so it builds its own).
fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let key = (std::process::id(), threads);
    let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&key) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("zarrkit-engine-{i}"))
        .build()
        .map_err(|e| format!("cannot start {threads} threads: {e}"))?;
    let p = Arc::new(p);
    pools.insert(key, p.clone());
    Ok(p)
}

/// The most threads a batch uses, whatever the caller asks.
const MAX_THREADS: usize = 256;

/// Run `f(i)` for every `i < n`, on `threads` threads; the first error stops the batch.
pub(crate) fn run<T: Send>(
    n: usize,
    threads: usize,
    f: impl Fn(usize) -> Result<T, TaskError> + Sync + Send,
) -> Result<Vec<T>, TaskError> {
    if threads <= 1 || n <= 1 {
        return (0..n).map(f).collect();
    }
    let p = pool(threads.min(MAX_THREADS)).map_err(TaskError::Value)?;
    p.install(|| (0..n).into_par_iter().map(f).collect())
}

// --- reading --------------------------------------------------------------------------------

fn read_range(file: &File, path: &str, offset: u64, length: u64) -> Result<Vec<u8>, String> {
    let n = usize::try_from(length).map_err(|_| format!("{path}: range too large"))?;
    let mut buf = vec![0u8; n];
    file.read_exact_at(&mut buf, offset)
        .map_err(|e| format!("cannot read {length} bytes at {offset} of {path}: {e}"))?;
    Ok(buf)
}

/// A file opened for a source by the engine, or one the caller holds open (never closed
/// here).
enum FileRef {
    Owned(File),
    Borrowed(std::mem::ManuallyDrop<File>),
}

impl std::ops::Deref for FileRef {
    type Target = File;
    fn deref(&self) -> &File {
        match self {
            FileRef::Owned(f) => f,
            FileRef::Borrowed(f) => f,
        }
    }
}

/// A file opened for a source, with the length of the source's range in it.
enum Opening {
    File(FileRef, u64),
    Missing,
    Deferred,
}

/// Open a file or descriptor source (see `open_source`).
fn open_any(source: &Source) -> Result<Opening, String> {
    match source {
        Source::File { path, offset, length } => open_source(path, *offset, *length),
        Source::Descriptor { fd, name, length, .. } => {
            if *fd < 0 {
                return Err(format!("{name}: no open file"));
            }
            // SAFETY: the descriptor is only read with pread, and ManuallyDrop never closes
            // it: it stays the caller's. A descriptor that is not an open, readable file
            // fails those reads with an error, nothing worse.
            let file = std::mem::ManuallyDrop::new(unsafe {
                <File as std::os::fd::FromRawFd>::from_raw_fd(*fd)
            });
            Ok(Opening::File(FileRef::Borrowed(file), *length))
        }
        Source::Memory { .. } => Err("a memory source has no file".into()),
    }
}

/// Open a file source without following a symbolic link as its last component (the
/// caller vouches for the directories above it).
fn open_source(path: &str, offset: u64, length: Option<u64>) -> Result<Opening, String> {
    let opened = OpenOptions::new()
        .read(true)
        // O_NONBLOCK: a FIFO where a value belongs opens at once (and is refused below)
        // instead of waiting for a writer forever; reads of a regular file ignore it.
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path);
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            return match e.raw_os_error() {
                Some(libc::ENOENT | libc::ENOTDIR | libc::EISDIR | libc::ENAMETOOLONG) => {
                    Ok(Opening::Missing)
                }
                Some(libc::ELOOP) => Ok(Opening::Deferred),
                _ => Err(format!("cannot open {path}: {e}")),
            }
        }
    };
    let meta = file.metadata().map_err(|e| format!("cannot stat {path}: {e}"))?;
    if meta.is_dir() {
        return Ok(Opening::Missing);
    }
    if !meta.is_file() {
        return Err(format!("{path} is not a regular file (a FIFO, device or socket): refused"));
    }
    let length = match length {
        Some(n) => n,
        None => meta.len().checked_sub(offset).ok_or_else(|| {
            format!("{path}: offset {offset} is past the end ({} bytes)", meta.len())
        })?,
    };
    Ok(Opening::File(FileRef::Owned(file), length))
}

/// The whole of the source of `key`: borrowed for memory, read for a file; None with the
/// outcome when a file is missing or deferred. A file that cannot be read is a Read
/// error; bytes that fail their checksum, a Decode error.
pub(crate) fn fetch<'a>(
    key: &str,
    source: &'a Source,
) -> Result<std::result::Result<Cow<'a, [u8]>, Outcome>, TaskError> {
    let read = |e: String| TaskError::Read(format!("{key}: {e}"));
    match source {
        Source::Memory { .. } => Ok(Ok(Cow::Borrowed(source.memory().expect("memory")))),
        Source::File { .. } | Source::Descriptor { .. } => match open_any(source).map_err(read)? {
            Opening::File(f, n) => {
                let (path, offset) = source.place();
                let data = read_range(&f, path, offset, n).map_err(read)?;
                source.check_whole(&data).map_err(|e| TaskError::Decode(format!("{key}: {e}")))?;
                Ok(Ok(Cow::Owned(data)))
            }
            Opening::Missing => Ok(Err(Outcome::Missing)),
            Opening::Deferred => Ok(Err(Outcome::Deferred)),
        },
    }
}

fn check_sel(sel: &[Dim], shape: &[usize]) -> bool {
    sel.len() == shape.len() && sel.iter().zip(shape).all(|(d, &n)| d.within(n))
}

fn check_task(key: &str, plain: &Plain, regions: &[Region], out: &OutArray) -> Result<(), TaskError> {
    for r in regions {
        check_region(key, plain, &r.chunk_sel, out, &r.out_sel)?;
    }
    Ok(())
}

fn check_region(
    key: &str,
    plain: &Plain,
    chunk_sel: &[Dim],
    out: &OutArray,
    out_sel: &[Dim],
) -> Result<(), TaskError> {
    if !check_sel(chunk_sel, &plain.shape) {
        return Err(TaskError::Value(format!(
            "{key}: chunk selection {chunk_sel:?} is outside the chunk shape {:?}",
            plain.shape
        )));
    }
    if !out.check(out_sel) {
        return Err(TaskError::Value(format!(
            "{key}: output selection {out_sel:?} is outside the output shape {:?}",
            out.shape
        )));
    }
    if chunk_sel.iter().map(|d| d.count).ne(out_sel.iter().map(|d| d.count)) {
        return Err(TaskError::Value(format!(
            "{key}: chunk and output selections select different counts"
        )));
    }
    Ok(())
}

fn decode_scatter(
    what: &str,
    plain: &Plain,
    data: &[u8],
    regions: &[Region],
    out: &OutArray,
) -> Result<(), TaskError> {
    plain
        .with_decoded(data, |decoded| {
            regions.iter().try_for_each(|r| {
                strided::scatter(decoded, &plain.strides, &r.chunk_sel, out, &r.out_sel, plain.swap)
            })
        })
        .map_err(|e| TaskError::Decode(format!("{what}: {e}")))?
        .map_err(|e| TaskError::Value(format!("{what}: {e}")))
}

/// Fill every region's part of `out` with the fill value (its chunk is not stored).
fn fill_regions(chain: &Chain, out: &OutArray, regions: &[Region], what: &str) -> Result<(), TaskError> {
    regions
        .iter()
        .try_for_each(|r| strided::fill(&chain.fill, out, &r.out_sel))
        .map_err(|e| TaskError::Value(format!("{what}: {e}")))
}

// --- decode ---------------------------------------------------------------------------------

/// Decode every task into `out`; the outcome of each (files may be missing or deferred).
pub fn decode_into(
    chain: &Chain,
    out: &OutArray,
    tasks: &[Task],
    threads: usize,
) -> Result<Vec<Outcome>, TaskError> {
    let Kind::Plain(plain) = &chain.kind else {
        return Err(TaskError::Value("a sharded chain: use decode_shards_into".into()));
    };
    for t in tasks {
        check_task(&t.key, plain, &t.regions, out)?;
    }
    run(tasks.len(), threads, |i| {
        let t = &tasks[i];
        if t.regions.iter().all(Region::is_empty) {
            return Ok(Outcome::Read);
        }
        match fetch(&t.key, &t.source)? {
            Ok(data) => {
                decode_scatter(&t.key, plain, &data, &t.regions, out)?;
                Ok(Outcome::Read)
            }
            Err(Outcome::Missing) => {
                fill_regions(chain, out, &t.regions, &t.key)?;
                Ok(Outcome::Missing)
            }
            Err(other) => Ok(other),
        }
    })
}

/// A file's bytes, None when missing, or `Err(Outcome::Deferred)` for a symbolic link.
pub type FileRead = std::result::Result<Option<Vec<u8>>, Outcome>;

/// The whole of each file, in parallel: None for a missing one, `Err(Outcome::Deferred)`
/// for a symbolic link (which the caller reads through its store).
pub fn read_files(paths: &[String], threads: usize) -> Result<Vec<FileRead>, TaskError> {
    run(paths.len(), threads, |i| {
        let path = &paths[i];
        let source = Source::File { path: path.clone(), offset: 0, length: None };
        match fetch(path, &source)? {
            Ok(data) => Ok(Ok(Some(data.into_owned()))),
            Err(Outcome::Missing) => Ok(Ok(None)),
            Err(other) => Ok(Err(other)),
        }
    })
}

/// One inner chunk to decode (or fill) after its shard's index was read.
struct InnerJob<'a> {
    shard: usize,
    inner: &'a InnerTask,
    /// (offset, nbytes) in the shard, or None for a missing inner chunk.
    range: Option<(u64, u64)>,
}

/// A shard once its index is read: the whole shard in memory (borrowed, or read from its
/// file when most of it is wanted), or an open file read inner chunk by inner chunk.
enum Opened<'a> {
    Memory(&'a [u8]),
    Owned(Vec<u8>),
    File { file: FileRef, path: &'a str, offset: u64 },
    /// No shard: its inner chunks are filled (Missing) or left to the caller (Deferred).
    Absent(Outcome),
}

impl Opened<'_> {
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Opened::Memory(m) => Some(m),
            Opened::Owned(v) => Some(v),
            _ => None,
        }
    }
}

fn open_shard<'a>(
    sh: &Sharded,
    task: &'a ShardTask,
) -> Result<(Opened<'a>, Vec<(u64, u64)>), TaskError> {
    let key = &task.key;
    let read = |e: String| TaskError::Read(format!("{key}: {e}"));
    let (opened, total) = match &task.source {
        Source::Memory { len, .. } => (Opened::Memory(task.source.memory().expect("memory")), *len as u64),
        Source::File { .. } | Source::Descriptor { .. } => match open_any(&task.source).map_err(read)? {
            Opening::File(file, n) => {
                let (path, offset) = task.source.place();
                // Reading a shard whole is one request; chunk by chunk pays one per chunk.
                if task.inner.len() * 2 >= sh.count() {
                    let data = read_range(&file, path, offset, n).map_err(read)?;
                    task.source
                        .check_whole(&data)
                        .map_err(|e| TaskError::Decode(format!("{key}: {e}")))?;
                    (Opened::Owned(data), n)
                } else {
                    (Opened::File { file, path, offset }, n)
                }
            }
            Opening::Missing => return Ok((Opened::Absent(Outcome::Missing), Vec::new())),
            Opening::Deferred => return Ok((Opened::Absent(Outcome::Deferred), Vec::new())),
        },
    };
    let need = sh.index_nbytes as u64;
    if total < need {
        return Err(TaskError::Decode(format!(
            "{key}: shard index needs {need} bytes, found {total}"
        )));
    }
    let index_at = if sh.index_start { 0 } else { total - need };
    let raw: Cow<[u8]> = match &opened {
        Opened::File { file, path, offset } => {
            Cow::Owned(read_range(file, path, offset + index_at, need).map_err(read)?)
        }
        other => {
            let s = index_at as usize;
            Cow::Borrowed(&other.bytes().expect("in memory")[s..s + sh.index_nbytes])
        }
    };
    let entries = sh.decode_index(&raw).map_err(|e| TaskError::Decode(format!("{key}: {e}")))?;
    sh.check_index(&entries, total).map_err(|e| TaskError::Decode(format!("{key}: {e}")))?;
    drop(raw);
    Ok((opened, entries))
}

/// Decode the requested inner chunks of every shard into `out`; the outcome of each shard.
pub fn decode_shards_into(
    chain: &Chain,
    out: &OutArray,
    tasks: &[ShardTask],
    threads: usize,
) -> Result<Vec<Outcome>, TaskError> {
    let Kind::Sharded(sh) = &chain.kind else {
        return Err(TaskError::Value("not a sharded chain: use decode_into".into()));
    };
    for t in tasks {
        for it in &t.inner {
            if sh.ravel(&it.coords).is_none() {
                return Err(TaskError::Value(format!(
                    "{}: inner chunk {} is outside a shard of {} chunks",
                    t.key,
                    coords_repr(&it.coords),
                    coords_repr(&sh.chunks_per_shard)
                )));
            }
            check_task(&t.key, &sh.inner, &it.regions, out)?;
        }
    }
    // Phase 1: every shard's index (in parallel: each is one read and a checksum).
    let opened = run(tasks.len(), threads, |i| open_shard(sh, &tasks[i]))?;
    let mut jobs: Vec<InnerJob> = Vec::new();
    let mut outcomes = Vec::with_capacity(tasks.len());
    for (s, (task, (shard, entries))) in tasks.iter().zip(&opened).enumerate() {
        let outcome = match shard {
            Opened::Absent(o) => *o,
            _ => Outcome::Read,
        };
        outcomes.push(outcome);
        if outcome == Outcome::Deferred {
            continue;
        }
        for it in &task.inner {
            let range = match entries.get(sh.ravel(&it.coords).expect("checked")) {
                Some(&(o, n)) if !(o == EMPTY && n == EMPTY) => Some((o, n)),
                _ => None, // not stored in the shard, or no shard
            };
            jobs.push(InnerJob { shard: s, inner: it, range });
        }
    }
    // Phase 2: every requested inner chunk, across shards.
    run(jobs.len(), threads, |j| {
        let job = &jobs[j];
        let task = &tasks[job.shard];
        let it = job.inner;
        let Some((o, n)) = job.range else {
            return fill_regions(chain, out, &it.regions, &task.key);
        };
        if it.regions.iter().all(Region::is_empty) {
            return Ok(());
        }
        let what = format!("{} inner chunk {}", task.key, coords_repr(&it.coords));
        let data: Cow<[u8]> = match &opened[job.shard].0 {
            Opened::File { file, path, offset } => Cow::Owned(
                read_range(file, path, offset + o, n)
                    .map_err(|e| TaskError::Read(format!("{what}: {e}")))?,
            ),
            // In bounds: check_index kept every stored range inside the shard.
            other => Cow::Borrowed(&other.bytes().expect("in memory")[o as usize..(o + n) as usize]),
        };
        decode_scatter(&what, &sh.inner, &data, &it.regions, out)
    })?;
    Ok(outcomes)
}

// --- encode ---------------------------------------------------------------------------------

fn encode_plain(chain: &Chain, plain: &Plain, arr: &InArray, origin: &[usize], skip_fill: bool
) -> Result<Option<Vec<u8>>, String> {
    plain.with_scratch(|raw| {
        strided::gather_into(arr, origin, &plain.shape, &plain.perm, 0, raw)?;
        // The fill check compares native bytes, before any byte swap.
        if skip_fill && chain.is_fill(raw) {
            return Ok(None);
        }
        if plain.swap > 1 {
            for u in raw.chunks_exact_mut(plain.swap) {
                u.reverse();
            }
        }
        plain.encode(raw).map(Some)
    })
}

/// Encode every chunk as `encode_batch` does and hand each result to `then` (None: all
/// fill) as the pieces whose concatenation is the stored value, on `threads` threads. A
/// plain chunk is one piece and goes to `then` from the thread that encoded it, at once, so
/// its buffer is reused for the next chunk instead of a batch's worth of fresh memory being
/// held. A shard is its index and its inner chunks, never copied into one buffer: a file
/// takes them one after another.
pub fn encode_then<T: Send>(
    chain: &Chain,
    chunks: &[InArray],
    threads: usize,
    skip_fill: bool,
    then: impl Fn(usize, Option<&[&[u8]]>) -> T + Sync + Send,
) -> Result<Vec<T>, TaskError> {
    let sh = match &chain.kind {
        Kind::Plain(plain) => {
            return encode_plain_chunks(chain, plain, chunks, threads, skip_fill, |i, encoded| {
                let piece = encoded.as_deref();
                then(i, piece.as_ref().map(std::slice::from_ref))
            });
        }
        Kind::Sharded(sh) => sh,
    };
    check_chunks(chain, chunks)?;
    let per = sh.count();
    let encode_inner = |s: usize, m: usize| {
        let coords = sh.unravel(sh.morton()[m]);
        let origin: Vec<usize> = coords.iter().zip(&sh.inner.shape).map(|(c, n)| c * n).collect();
        // Inner chunks equal to the fill value are never stored, whatever skip_fill.
        encode_plain(chain, &sh.inner, &chunks[s], &origin, true)
            .map_err(|e| TaskError::Value(format!("chunk {s}: {e}")))
    };
    let hand_on = |s: usize, parts: &[Option<Vec<u8>>]| match shard_index(sh, parts) {
        None => then(s, None),
        Some(index) => {
            let mut pieces: Vec<&[u8]> = Vec::with_capacity(parts.len() + 1);
            if sh.index_start {
                pieces.push(&index);
            }
            pieces.extend(parts.iter().flatten().map(Vec::as_slice));
            if !sh.index_start {
                pieces.push(&index);
            }
            then(s, Some(&pieces))
        }
    };
    if chunks.len() >= SHARDS_PER_THREAD * threads.max(1) {
        // Enough shards to share out whole: each thread encodes a shard's inner chunks and
        // hands it on, so no thread waits on a shard finished alone (S11's 32 shards a call
        // kept the cores 1.8x busy, not 2x).
        return run(chunks.len(), threads, |s| {
            let parts = (0..per).map(|m| encode_inner(s, m)).collect::<Result<Vec<_>, _>>()?;
            Ok(hand_on(s, &parts))
        });
    }
    // Every inner chunk of every shard, in Morton order within a shard.
    let inner = run(chunks.len() * per, threads, |j| encode_inner(j / per, j % per))?;
    run(chunks.len(), threads, |s| Ok(hand_on(s, &inner[s * per..(s + 1) * per])))
}

/// Encode every chunk of a plain chain, on `threads` threads, and hand each (None: all
/// fill) to `then` on the thread that encoded it.
fn encode_plain_chunks<T: Send>(
    chain: &Chain,
    plain: &Plain,
    chunks: &[InArray],
    threads: usize,
    skip_fill: bool,
    then: impl Fn(usize, Option<Vec<u8>>) -> T + Sync + Send,
) -> Result<Vec<T>, TaskError> {
    check_chunks(chain, chunks)?;
    let zero = vec![0usize; chain.chunk_shape.len()];
    run(chunks.len(), threads, |i| {
        let encoded = encode_plain(chain, plain, &chunks[i], &zero, skip_fill)
            .map_err(|e| TaskError::Value(format!("chunk {i}: {e}")))?;
        Ok(then(i, encoded))
    })
}

fn check_chunks(chain: &Chain, chunks: &[InArray]) -> Result<(), TaskError> {
    for (i, a) in chunks.iter().enumerate() {
        if a.shape != chain.chunk_shape || a.itemsize != chain.itemsize {
            return Err(TaskError::Value(format!(
                "chunk {i}: shape {:?} and itemsize {}, expected {:?} and {}",
                a.shape, a.itemsize, chain.chunk_shape, chain.itemsize
            )));
        }
    }
    Ok(())
}

/// Encode whole chunks (or whole shards, for a sharding chain), each into one buffer.
pub fn encode_batch(
    chain: &Chain,
    chunks: &[InArray],
    threads: usize,
    skip_fill: bool,
) -> Result<Vec<Option<Vec<u8>>>, TaskError> {
    if let Kind::Plain(plain) = &chain.kind {
        // A plain chunk's one buffer is handed back as it is, not copied.
        return encode_plain_chunks(chain, plain, chunks, threads, skip_fill, |_, e| e);
    }
    encode_then(chain, chunks, threads, skip_fill, |_, pieces| pieces.map(<[&[u8]]>::concat))
}

/// Shards a call must hold per thread for its threads to take whole shards (fewer, as one
/// large shard, share out their inner chunks instead).
const SHARDS_PER_THREAD: usize = 4;

/// The index of a shard whose encoded inner chunks are given in Morton order, laid out one
/// after another after the index (at the start) or before it (at the end); None when no
/// inner chunk is stored.
fn shard_index(sh: &Sharded, parts: &[Option<Vec<u8>>]) -> Option<Vec<u8>> {
    if parts.iter().all(|p| p.is_none()) {
        return None;
    }
    let mut entries = vec![(EMPTY, EMPTY); sh.count()];
    let mut pos = if sh.index_start { sh.index_nbytes } else { 0 };
    for (m, part) in parts.iter().enumerate() {
        if let Some(p) = part {
            entries[sh.morton()[m]] = (pos as u64, p.len() as u64);
            pos += p.len();
        }
    }
    Some(sh.encode_index(&entries))
}
