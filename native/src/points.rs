//! Pointwise reads (`vindex`): the caller gives one coordinate array per dimension; the
//! engine finds each point's chunk, reads and decodes every chunk touched once, and copies
//! each point's item to its place in a flat output. Python neither groups the points by
//! chunk nor touches a chunk.

use rayon::prelude::*;

use crate::chain::{Chain, Kind};
use crate::engine::{Outcome, Source, TaskError};
use crate::grid::{summarize, ChunkKeys, Files, GridResult};
use crate::strided::OutArray;

/// One run of consecutive points in the same chunk.
#[derive(Clone, Copy)]
struct Run {
    chunk: u64,
    start: usize,
    end: usize,
}

/// Runs of `coords[.][start..end]` by chunk, in point order.
fn runs_of(
    coords: &[&[i64]],
    chunk_shape: &[usize],
    grid: &[u64],
    start: usize,
    end: usize,
) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for i in start..end {
        let mut id = 0u64;
        for d in 0..coords.len() {
            id = id * grid[d] + (coords[d][i] as u64) / chunk_shape[d] as u64;
        }
        match runs.last_mut() {
            Some(r) if r.chunk == id => r.end = i + 1,
            _ => runs.push(Run { chunk: id, start: i, end: i + 1 }),
        }
    }
    runs
}

/// The points of a pointwise read grouped by chunk: each chunk touched (C order of the
/// grid) with its runs of points.
pub struct PointChunks {
    runs: Vec<Run>,
    /// Each chunk's coordinates and the range of its runs in `runs`.
    chunks: Vec<(Vec<usize>, std::ops::Range<usize>)>,
}

impl PointChunks {
    /// Each chunk's coordinates, in the order of the reads.
    pub fn coords(&self) -> impl Iterator<Item = &Vec<usize>> {
        self.chunks.iter().map(|(c, _)| c)
    }
}

/// Check the points (`coords`: one array per dimension, as many points as the 1-d `out`
/// has items) against `array_shape` and group them by chunk.
pub fn group_points(
    chain: &Chain,
    out: &OutArray,
    coords: &[&[i64]],
    array_shape: &[usize],
    threads: usize,
) -> Result<PointChunks, TaskError> {
    if !matches!(chain.kind, Kind::Plain(_)) {
        return Err(TaskError::Value("points of a sharded chain are not supported".into()));
    }
    let ndim = chain.chunk_shape.len();
    let n = out.shape.iter().product::<usize>();
    if coords.len() != ndim || array_shape.len() != ndim || out.shape.len() != 1 {
        return Err(TaskError::Value(
            "one coordinate array per dimension, and a 1-d output, are needed".into(),
        ));
    }
    let mut grid = Vec::with_capacity(ndim);
    for (&length, &c) in array_shape.iter().zip(&chain.chunk_shape) {
        if c == 0 {
            return Err(TaskError::Value("chunks of length 0".into()));
        }
        grid.push((length.div_ceil(c) as u64).max(1));
    }
    // Chunks are numbered in one u64 (C order of the grid).
    grid.iter()
        .try_fold(1u64, |total, &g| total.checked_mul(g))
        .ok_or_else(|| TaskError::Value("too many chunks to number".into()))?;
    for (d, c) in coords.iter().enumerate() {
        if c.len() != n {
            return Err(TaskError::Value(format!(
                "coordinate array {d} has {} points, the output {n}",
                c.len()
            )));
        }
        if c.iter().any(|&x| x < 0 || x as u64 >= array_shape[d] as u64) {
            return Err(TaskError::Value(format!("coordinate array {d} leaves the array")));
        }
    }
    // Runs of points by chunk, found in parallel slices, then gathered chunk by chunk.
    let slices = threads.max(1) * 4;
    let step = n.div_ceil(slices).max(1);
    let parts: Vec<Vec<Run>> = crate::engine::run(n.div_ceil(step), threads, |k| {
        Ok(runs_of(coords, &chain.chunk_shape, &grid, k * step, ((k + 1) * step).min(n)))
    })?;
    let mut runs: Vec<Run> = parts.into_iter().flatten().collect();
    runs.par_sort_by_key(|r| (r.chunk, r.start));
    let mut chunks: Vec<(Vec<usize>, std::ops::Range<usize>)> = Vec::new();
    let mut last_id = None;
    for (j, r) in runs.iter().enumerate() {
        match chunks.last_mut() {
            Some((_, range)) if last_id == Some(r.chunk) => range.end = j + 1,
            _ => {
                let mut rest = r.chunk;
                let mut chunk_coords = vec![0usize; ndim];
                for d in (0..ndim).rev() {
                    chunk_coords[d] = (rest % grid[d]) as usize;
                    rest /= grid[d];
                }
                chunks.push((chunk_coords, j..j + 1));
                last_id = Some(r.chunk);
            }
        }
    }
    Ok(PointChunks { runs, chunks })
}

/// Read the chunks of `points` (from `group_points`) from their `sources` (one per chunk,
/// None when not stored: its points get the fill value, as for a missing file) and copy
/// each point's item into `out`.
pub fn read_points(
    chain: &Chain,
    out: &OutArray,
    coords: &[&[i64]],
    points: &PointChunks,
    keys: &ChunkKeys,
    sources: Vec<Option<Source>>,
    threads: usize,
) -> Result<GridResult, TaskError> {
    let Kind::Plain(plain) = &chain.kind else {
        return Err(TaskError::Value("points of a sharded chain are not supported".into()));
    };
    if sources.len() != points.chunks.len() {
        return Err(TaskError::Value(format!(
            "{} values for {} chunks",
            sources.len(),
            points.chunks.len()
        )));
    }
    let outcomes = crate::engine::run(points.chunks.len(), threads, |k| {
        let (chunk_coords, range) = &points.chunks[k];
        let key = keys.key(chunk_coords);
        let origin: Vec<i64> =
            chunk_coords.iter().zip(&chain.chunk_shape).map(|(&c, &s)| (c * s) as i64).collect();
        let put = |source: &[u8]| -> Result<(), String> {
            for r in &points.runs[range.clone()] {
                for i in r.start..r.end {
                    let offset: usize = coords
                        .iter()
                        .zip(&origin)
                        .zip(&plain.strides)
                        .map(|((c, o), s)| (c[i] - o) as usize * s)
                        .sum();
                    out.put_item(i, source, offset, plain.swap)?;
                }
            }
            Ok(())
        };
        let fetched = match &sources[k] {
            Some(source) => crate::engine::fetch(&key, source)?,
            None => Err(Outcome::Missing),
        };
        let outcome = match fetched {
            Ok(data) => {
                plain
                    .with_decoded(&data, |decoded| put(decoded))
                    .map_err(|e| TaskError::Decode(format!("{key}: {e}")))?
                    .map_err(|e| TaskError::Value(format!("{key}: {e}")))?;
                Outcome::Read
            }
            Err(Outcome::Missing) => {
                for r in &points.runs[range.clone()] {
                    for i in r.start..r.end {
                        out.put_item(i, &chain.fill, 0, 0)
                            .map_err(|e| TaskError::Value(format!("{key}: {e}")))?;
                    }
                }
                Outcome::Missing
            }
            Err(other) => other,
        };
        Ok((outcome, chunk_coords.clone()))
    })?;
    Ok(summarize(outcomes))
}

/// A pointwise read from chunk files: `group_points`, then `read_points` of their files.
pub fn decode_points_into(
    chain: &Chain,
    out: &OutArray,
    coords: &[&[i64]],
    array_shape: &[usize],
    files: &Files,
    threads: usize,
) -> Result<GridResult, TaskError> {
    let points = group_points(chain, out, coords, array_shape, threads)?;
    let sources = points.coords().map(|c| Some(files.source(&files.key(c)))).collect();
    read_points(chain, out, coords, &points, &files.keys, sources, threads)
}
