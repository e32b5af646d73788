//! Reads of a regular box of chunks from files: the caller gives, per dimension, the
//! chunks a selection touches and what it takes of each; the engine forms every chunk (or
//! shard) of their product, names its file, and reads it as `decode_into` (or
//! `decode_shards_into`) would; or, for a store whose values Python fetches, names every
//! chunk for one fetch and reads the values it gets back. Python then plans per dimension,
//! not per chunk.

use std::fmt::Write;

use crate::chain::{Chain, Kind};
use crate::engine::{self, InnerTask, Outcome, ShardTask, Source, Task, TaskError};
use crate::strided::{self, Dim, OutArray};

/// One chunk along one dimension: its index in the grid (of inner chunks, for a sharded
/// chain) and the selections of it and of the output.
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    pub index: usize,
    pub chunk_sel: Dim,
    pub out_sel: Dim,
}

/// How the chunks are named: `prefix` + the coordinates joined by `separator`, as the store
/// names them.
pub struct ChunkKeys {
    pub prefix: String,
    pub separator: String,
}

impl ChunkKeys {
    pub(crate) fn key(&self, coords: &[usize]) -> String {
        let mut key = String::with_capacity(self.prefix.len() + 8 * coords.len());
        key.push_str(&self.prefix);
        for (k, c) in coords.iter().enumerate() {
            if k > 0 {
                key.push_str(&self.separator);
            }
            let _ = write!(key, "{c}");
        }
        key
    }
}

/// Where the chunk files are: `root` + each chunk's key.
pub struct Files {
    pub root: String,
    pub keys: ChunkKeys,
}

impl Files {
    pub(crate) fn key(&self, coords: &[usize]) -> String {
        self.keys.key(coords)
    }

    pub(crate) fn source(&self, key: &str) -> Source {
        Source::File { path: format!("{}{key}", self.root), offset: 0, length: None }
    }
}

/// What a grid read found: how many chunks (or shards) were missing, and the coordinates
/// of those whose files are symbolic links, left for the caller to read.
pub struct GridResult {
    pub missing: usize,
    pub deferred: Vec<Vec<usize>>,
}

fn count(mut lengths: impl Iterator<Item = usize>) -> Result<usize, TaskError> {
    lengths
        .try_fold(1usize, |a, n| a.checked_mul(n))
        .ok_or_else(|| TaskError::Value("too many chunks".into()))
}

/// Every combination (C order) of one item from each list of `lengths`, as the items'
/// positions in their lists; how many there are, checked not to overflow.
fn combinations(
    lengths: &[usize],
) -> Result<(usize, impl Iterator<Item = Vec<usize>> + '_), TaskError> {
    let n = count(lengths.iter().copied())?;
    let all = (0..n).map(move |mut i| {
        let mut digits = vec![0; lengths.len()];
        for d in (0..lengths.len()).rev() {
            digits[d] = i % lengths[d];
            i /= lengths[d];
        }
        digits
    });
    Ok((n, all))
}

pub fn decode_grid_into(
    chain: &Chain,
    out: &OutArray,
    dims: &[Vec<Piece>],
    files: &Files,
    threads: usize,
) -> Result<GridResult, TaskError> {
    if dims.len() != chain.chunk_shape.len() {
        return Err(TaskError::Value(format!(
            "{} dimensions of pieces for a chain of {}",
            dims.len(),
            chain.chunk_shape.len()
        )));
    }
    match &chain.kind {
        Kind::Plain(_) => plain(chain, out, dims, files, threads),
        Kind::Sharded(sh) => sharded(chain, out, dims, files, &sh.chunks_per_shard, threads),
    }
}

fn plain(
    chain: &Chain,
    out: &OutArray,
    dims: &[Vec<Piece>],
    files: &Files,
    threads: usize,
) -> Result<GridResult, TaskError> {
    let chunks = box_chunks(dims, &files.keys)?;
    let tasks: Vec<Task> = chunks
        .keys
        .into_iter()
        .zip(chunks.sels)
        .map(|(key, (chunk_sel, out_sel))| Task { source: files.source(&key), key, chunk_sel, out_sel })
        .collect();
    let outcomes = engine::decode_into(chain, out, &tasks, threads)?;
    Ok(summarize(outcomes.into_iter().zip(chunks.coords)))
}

/// The chunks of a regular box of a plain chain, in C order: each one's key, its
/// coordinates, and the selections of it and of the output.
pub struct BoxChunks {
    pub keys: Vec<String>,
    coords: Vec<Vec<usize>>,
    sels: Vec<(Vec<Dim>, Vec<Dim>)>,
}

/// The chunks of the product of `dims`, named by `keys`.
pub fn box_chunks(dims: &[Vec<Piece>], keys: &ChunkKeys) -> Result<BoxChunks, TaskError> {
    let lengths: Vec<usize> = dims.iter().map(Vec::len).collect();
    let (n, all) = combinations(&lengths)?;
    let mut chunks = BoxChunks {
        keys: Vec::with_capacity(n),
        coords: Vec::with_capacity(n),
        sels: Vec::with_capacity(n),
    };
    for digits in all {
        let pieces: Vec<&Piece> = digits.iter().zip(dims).map(|(&j, d)| &d[j]).collect();
        let coords: Vec<usize> = pieces.iter().map(|p| p.index).collect();
        chunks.keys.push(keys.key(&coords));
        chunks.coords.push(coords);
        chunks.sels.push((
            pieces.iter().map(|p| p.chunk_sel).collect(),
            pieces.iter().map(|p| p.out_sel).collect(),
        ));
    }
    Ok(chunks)
}

/// Read a regular box of a plain chain (`chunks`, from `box_chunks`) from the value of each
/// chunk that the caller fetched (None: not stored, its region filled with the fill value),
/// as `decode_grid_into` reads files.
pub fn decode_values_into(
    chain: &Chain,
    out: &OutArray,
    chunks: BoxChunks,
    values: Vec<Option<Source>>,
    threads: usize,
) -> Result<GridResult, TaskError> {
    // A sharded chain is refused by the caller before it fetches, and by decode_into.
    if values.len() != chunks.keys.len() {
        return Err(TaskError::Value(format!(
            "{} values for {} chunks",
            values.len(),
            chunks.keys.len()
        )));
    }
    let mut tasks = Vec::with_capacity(values.len());
    let mut coords_of = Vec::with_capacity(values.len());
    let mut missing = 0;
    let each = chunks.keys.into_iter().zip(chunks.coords).zip(chunks.sels).zip(values);
    for (((key, coords), (chunk_sel, out_sel)), value) in each {
        match value {
            Some(source) => {
                tasks.push(Task { source, key, chunk_sel, out_sel });
                coords_of.push(coords);
            }
            None => {
                strided::fill(&chain.fill, out, &out_sel)
                    .map_err(|e| TaskError::Value(format!("{key}: {e}")))?;
                missing += 1;
            }
        }
    }
    let outcomes = engine::decode_into(chain, out, &tasks, threads)?;
    let mut result = summarize(outcomes.into_iter().zip(coords_of));
    result.missing += missing;
    Ok(result)
}

fn sharded(
    chain: &Chain,
    out: &OutArray,
    dims: &[Vec<Piece>],
    files: &Files,
    per_shard: &[usize],
    threads: usize,
) -> Result<GridResult, TaskError> {
    // Per dimension: (shard index, range of its pieces); pieces come in ascending order.
    let mut groups: Vec<Vec<(usize, std::ops::Range<usize>)>> = Vec::with_capacity(dims.len());
    for (d, pieces) in dims.iter().enumerate() {
        let n = per_shard[d];
        let mut g: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        for (j, p) in pieces.iter().enumerate() {
            let s = p.index / n;
            match g.last_mut() {
                Some((last, range)) if *last == s => range.end = j + 1,
                Some((last, _)) if *last > s => {
                    return Err(TaskError::Value("pieces must come in ascending order".into()))
                }
                _ => g.push((s, j..j + 1)),
            }
        }
        groups.push(g);
    }
    let lengths: Vec<usize> = groups.iter().map(Vec::len).collect();
    let (n, all) = combinations(&lengths)?;
    let mut tasks = Vec::with_capacity(n);
    let mut coords_of = Vec::with_capacity(n);
    for digits in all {
        let chosen: Vec<&(usize, std::ops::Range<usize>)> =
            digits.iter().zip(&groups).map(|(&j, g)| &g[j]).collect();
        let coords: Vec<usize> = chosen.iter().map(|(s, _)| *s).collect();
        let inner_lengths: Vec<usize> = chosen.iter().map(|(_, r)| r.len()).collect();
        let (m, all_inner) = combinations(&inner_lengths)?;
        let mut inner = Vec::with_capacity(m);
        for inner_digits in all_inner {
            let pieces: Vec<&Piece> = (0..dims.len())
                .map(|d| &dims[d][chosen[d].1.start + inner_digits[d]])
                .collect();
            inner.push(InnerTask {
                coords: pieces.iter().zip(per_shard).map(|(p, &c)| p.index % c).collect(),
                chunk_sel: pieces.iter().map(|p| p.chunk_sel).collect(),
                out_sel: pieces.iter().map(|p| p.out_sel).collect(),
            });
        }
        let key = files.key(&coords);
        tasks.push(ShardTask { source: files.source(&key), key, inner });
        coords_of.push(coords);
    }
    let outcomes = engine::decode_shards_into(chain, out, &tasks, threads)?;
    Ok(summarize(outcomes.into_iter().zip(coords_of)))
}

/// The outcomes of reads of chunk (or shard) files, each with its coordinates, counted.
pub(crate) fn summarize(outcomes: impl IntoIterator<Item = (Outcome, Vec<usize>)>) -> GridResult {
    let mut result = GridResult { missing: 0, deferred: Vec::new() };
    for (o, coords) in outcomes {
        match o {
            Outcome::Missing => result.missing += 1,
            Outcome::Deferred => result.deferred.push(coords),
            Outcome::Read => {}
        }
    }
    result
}
