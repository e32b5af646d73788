//! Pointwise reads (`vindex`): the caller gives one coordinate array per dimension; the
//! engine finds each point's chunk, reads and decodes every chunk touched once, and copies
//! each point's item to its place in a flat output. Python neither groups the points by
//! chunk nor touches a chunk.

use rayon::prelude::*;

use crate::chain::{Chain, Kind};
use crate::engine::{Outcome, TaskError};
use crate::grid::{summarize, Files, GridResult};
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

#[allow(clippy::too_many_arguments)]
pub fn decode_points_into(
    chain: &Chain,
    out: &OutArray,
    coords: &[&[i64]],
    array_shape: &[usize],
    files: &Files,
    threads: usize,
) -> Result<GridResult, TaskError> {
    let Kind::Plain(plain) = &chain.kind else {
        return Err(TaskError::Value("points of a sharded chain are not supported".into()));
    };
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
    let mut chunks: Vec<(u64, std::ops::Range<usize>)> = Vec::new();
    for (j, r) in runs.iter().enumerate() {
        match chunks.last_mut() {
            Some((id, range)) if *id == r.chunk => range.end = j + 1,
            _ => chunks.push((r.chunk, j..j + 1)),
        }
    }
    let outcomes = crate::engine::run(chunks.len(), threads, |k| {
        let (id, range) = &chunks[k];
        let mut rest = *id;
        let mut chunk_coords = vec![0usize; ndim];
        for d in (0..ndim).rev() {
            chunk_coords[d] = (rest % grid[d]) as usize;
            rest /= grid[d];
        }
        let key = files.key(&chunk_coords);
        let origin: Vec<i64> =
            chunk_coords.iter().zip(&chain.chunk_shape).map(|(&c, &s)| (c * s) as i64).collect();
        let put = |source: &[u8]| -> Result<(), String> {
            for r in &runs[range.clone()] {
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
        match crate::engine::fetch(&key, &files.source(&key))? {
            Ok(data) => {
                plain
                    .with_decoded(&data, |decoded| put(decoded))
                    .map_err(|e| TaskError::Decode(format!("{key}: {e}")))?
                    .map_err(|e| TaskError::Value(format!("{key}: {e}")))?;
                Ok((Outcome::Read, chunk_coords))
            }
            Err(Outcome::Missing) => {
                let fill: Vec<u8> = chain.fill.clone();
                for r in &runs[range.clone()] {
                    for i in r.start..r.end {
                        out.put_item(i, &fill, 0, 0)
                            .map_err(|e| TaskError::Value(format!("{key}: {e}")))?;
                    }
                }
                Ok((Outcome::Missing, chunk_coords))
            }
            Err(other) => Ok((other, chunk_coords)),
        }
    })?;
    Ok(summarize(outcomes))
}
