//! Reads of a regular box of chunks from files: the caller gives, per dimension, the
//! chunks a selection touches and what it takes of each (one piece per chunk, or several
//! for index lists that fall into a chunk in runs); the engine forms every chunk (or
//! shard) of their product, names its file, and reads it as `decode_into` (or
//! `decode_shards_into`) would; or, for a store whose values Python fetches, names every
//! chunk for one fetch and reads the values it gets back. Python then plans per dimension,
//! not per chunk.

use std::fmt::Write;
use std::ops::Range;

use crate::chain::{Chain, Kind};
use crate::engine::{self, InnerTask, Outcome, Region, ShardTask, Source, Task, TaskError};
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
        .zip(chunks.regions)
        .map(|(key, regions)| Task { source: files.source(&key), key, regions })
        .collect();
    let outcomes = engine::decode_into(chain, out, &tasks, threads)?;
    Ok(summarize(outcomes.into_iter().zip(chunks.coords)))
}

/// The chunks of a regular box of a plain chain, in C order: each one's key, its
/// coordinates, and the regions of it the selection copies.
pub struct BoxChunks {
    pub keys: Vec<String>,
    coords: Vec<Vec<usize>>,
    regions: Vec<Vec<Region>>,
}

/// A dimension's pieces gathered by `group(piece)` (its chunk, or its shard): each value
/// with the range of the pieces that have it, which must come together, in ascending order.
fn groups_by(
    pieces: &[Piece],
    group: impl Fn(&Piece) -> usize,
) -> Result<Vec<(usize, Range<usize>)>, TaskError> {
    let mut groups: Vec<(usize, Range<usize>)> = Vec::new();
    for (j, p) in pieces.iter().enumerate() {
        let g = group(p);
        match groups.last_mut() {
            Some((last, range)) if *last == g => range.end = j + 1,
            Some((last, _)) if *last > g => {
                return Err(TaskError::Value("pieces must come in ascending chunk order".into()))
            }
            _ => groups.push((g, j..j + 1)),
        }
    }
    Ok(groups)
}

/// The regions of one chunk: every combination (C order) of its pieces in each dimension
/// (`ranges` of `dims`), most often one.
fn chunk_regions(dims: &[Vec<Piece>], ranges: &[&Range<usize>]) -> Result<Vec<Region>, TaskError> {
    let lengths: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
    let (n, all) = combinations(&lengths)?;
    let mut regions = Vec::with_capacity(n);
    for digits in all {
        let pieces: Vec<&Piece> =
            (0..dims.len()).map(|d| &dims[d][ranges[d].start + digits[d]]).collect();
        regions.push(Region {
            chunk_sel: pieces.iter().map(|p| p.chunk_sel).collect(),
            out_sel: pieces.iter().map(|p| p.out_sel).collect(),
        });
    }
    Ok(regions)
}

/// The chunks of the product of `dims`, named by `keys`.
pub fn box_chunks(dims: &[Vec<Piece>], keys: &ChunkKeys) -> Result<BoxChunks, TaskError> {
    let groups: Vec<Vec<(usize, Range<usize>)>> =
        dims.iter().map(|pieces| groups_by(pieces, |p| p.index)).collect::<Result<_, _>>()?;
    let lengths: Vec<usize> = groups.iter().map(Vec::len).collect();
    let (n, all) = combinations(&lengths)?;
    let mut chunks = BoxChunks {
        keys: Vec::with_capacity(n),
        coords: Vec::with_capacity(n),
        regions: Vec::with_capacity(n),
    };
    for digits in all {
        let chosen: Vec<&(usize, Range<usize>)> =
            digits.iter().zip(&groups).map(|(&j, g)| &g[j]).collect();
        let coords: Vec<usize> = chosen.iter().map(|(c, _)| *c).collect();
        let ranges: Vec<&Range<usize>> = chosen.iter().map(|(_, r)| r).collect();
        chunks.regions.push(chunk_regions(dims, &ranges)?);
        chunks.keys.push(keys.key(&coords));
        chunks.coords.push(coords);
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
    let each = chunks.keys.into_iter().zip(chunks.coords).zip(chunks.regions).zip(values);
    for (((key, coords), regions), value) in each {
        match value {
            Some(source) => {
                tasks.push(Task { source, key, regions });
                coords_of.push(coords);
            }
            None => {
                for r in &regions {
                    strided::fill(&chain.fill, out, &r.out_sel)
                        .map_err(|e| TaskError::Value(format!("{key}: {e}")))?;
                }
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
    // Per dimension: (shard index, range of its pieces).
    let groups: Vec<Vec<(usize, Range<usize>)>> = dims
        .iter()
        .zip(per_shard)
        .map(|(pieces, &n)| groups_by(pieces, |p| p.index / n))
        .collect::<Result<_, _>>()?;
    let lengths: Vec<usize> = groups.iter().map(Vec::len).collect();
    let (n, all) = combinations(&lengths)?;
    let mut tasks = Vec::with_capacity(n);
    let mut coords_of = Vec::with_capacity(n);
    for digits in all {
        let chosen: Vec<&(usize, Range<usize>)> =
            digits.iter().zip(&groups).map(|(&j, g)| &g[j]).collect();
        let coords: Vec<usize> = chosen.iter().map(|(s, _)| *s).collect();
        // Per dimension, this shard's inner chunks: (index, range of its pieces).
        let inner_groups: Vec<Vec<(usize, Range<usize>)>> = chosen
            .iter()
            .zip(dims)
            .map(|((_, range), pieces)| {
                groups_by(&pieces[range.clone()], |p| p.index).map(|g| {
                    g.into_iter()
                        .map(|(i, r)| (i, range.start + r.start..range.start + r.end))
                        .collect()
                })
            })
            .collect::<Result<_, _>>()?;
        let inner_lengths: Vec<usize> = inner_groups.iter().map(Vec::len).collect();
        let (m, all_inner) = combinations(&inner_lengths)?;
        let mut inner = Vec::with_capacity(m);
        for inner_digits in all_inner {
            let picked: Vec<&(usize, Range<usize>)> =
                inner_digits.iter().zip(&inner_groups).map(|(&j, g)| &g[j]).collect();
            let ranges: Vec<&Range<usize>> = picked.iter().map(|(_, r)| r).collect();
            inner.push(InnerTask {
                coords: picked.iter().zip(per_shard).map(|((i, _), &c)| i % c).collect(),
                regions: chunk_regions(dims, &ranges)?,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(index: usize, start: usize, out: usize) -> Piece {
        Piece {
            index,
            chunk_sel: Dim { start, step: 1, count: 1 },
            out_sel: Dim { start: out, step: 1, count: 1 },
        }
    }

    #[test]
    fn pieces_of_one_chunk_make_one_chunk_of_several_regions() {
        let keys = ChunkKeys { prefix: "c/".into(), separator: "/".into() };
        // Dimension 0: chunk 0 in two runs, then chunk 2; dimension 1: chunk 1.
        let dims = vec![vec![piece(0, 0, 0), piece(0, 3, 1), piece(2, 1, 2)], vec![piece(1, 0, 0)]];
        let chunks = box_chunks(&dims, &keys).unwrap();
        assert_eq!(chunks.keys, vec!["c/0/1", "c/2/1"]);
        assert_eq!(chunks.coords, vec![vec![0, 1], vec![2, 1]]);
        let starts: Vec<Vec<usize>> = chunks.regions[0]
            .iter()
            .map(|r| vec![r.chunk_sel[0].start, r.out_sel[0].start])
            .collect();
        assert_eq!(starts, vec![vec![0, 0], vec![3, 1]]);
        assert_eq!(chunks.regions[1].len(), 1);
    }

    #[test]
    fn pieces_out_of_chunk_order_are_refused() {
        let keys = ChunkKeys { prefix: String::new(), separator: ".".into() };
        let dims = vec![vec![piece(1, 0, 0), piece(0, 0, 1)]];
        assert!(box_chunks(&dims, &keys).is_err());
        // A chunk's pieces apart from one another would read it twice: refused too.
        let dims = vec![vec![piece(0, 0, 0), piece(1, 0, 1), piece(0, 1, 2)]];
        assert!(box_chunks(&dims, &keys).is_err());
    }
}
