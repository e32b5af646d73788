//! A chunk's codec chain, parsed from the description JSON the Python side passes, and the
//! whole-chunk decode / encode of its bytes (safe Rust; the strided copies to and from
//! numpy memory live in `strided.rs`).

use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::CString;

use serde_json::{Map, Value};

use crate::codecs::{self, Blosc, Codec, Result};

pub const EMPTY: u64 = u64::MAX;

/// Decoded chunks up to this size reuse a per-thread buffer (`Plain::with_decoded`); larger
/// ones get their own, so that no engine thread keeps more than this much alive.
const SCRATCH_MAX: usize = 64 << 20;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static GATHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Why a description is refused: `Unsupported` chains keep the Python path, `Invalid`
/// ones are malformed.
#[derive(Debug)]
pub enum ParseError {
    Unsupported(String),
    Invalid(String),
}

type PResult<T> = std::result::Result<T, ParseError>;

fn unsupported<T>(msg: impl Into<String>) -> PResult<T> {
    Err(ParseError::Unsupported(msg.into()))
}

fn invalid<T>(msg: impl Into<String>) -> PResult<T> {
    Err(ParseError::Invalid(msg.into()))
}

/// A chain without sharding: optional transposes, `bytes`, then bytes -> bytes codecs
/// (v3), or a v2 order plus at most one compressor.
#[derive(Debug, Clone)]
pub struct Plain {
    #[allow(dead_code)]
    pub itemsize: usize,
    pub shape: Vec<usize>,
    /// Byte stride, in the decoded (stored-order) buffer, of each axis of the chunk.
    pub strides: Vec<usize>,
    /// The encoded element order: encoded axis k is chunk axis `perm[k]`.
    pub perm: Vec<usize>,
    /// 0: no byte swap; else the size of the units whose bytes are reversed.
    pub swap: usize,
    /// bytes -> bytes codecs in encoding order.
    pub codecs: Vec<Codec>,
    /// `bounds[i]`: the size of what `codecs[i]` decodes to (exact for i = 0), at most.
    pub bounds: Vec<usize>,
    pub nbytes: usize,
}

#[derive(Debug, Clone)]
pub struct Sharded {
    pub inner: Plain,
    #[allow(dead_code)]
    pub shard_shape: Vec<usize>,
    pub chunks_per_shard: Vec<usize>,
    pub index_crc: bool,
    pub index_big: bool,
    pub index_start: bool,
    pub index_nbytes: usize,
    /// C-order linear indices of the inner chunks, in Morton order: made on the first
    /// encode (`morton()`), as a read never needs it and a shard may declare 2^26 inner
    /// chunks.
    morton: std::sync::OnceLock<Vec<usize>>,
}

impl Sharded {
    /// C-order linear indices of the inner chunks, in Morton order (made once).
    pub fn morton(&self) -> &[usize] {
        self.morton.get_or_init(|| morton_order(&self.chunks_per_shard))
    }
}

#[derive(Debug, Clone)]
pub enum Kind {
    Plain(Plain),
    Sharded(Sharded),
}

#[derive(Debug, Clone)]
pub struct Chain {
    pub itemsize: usize,
    pub chunk_shape: Vec<usize>,
    pub fill: Vec<u8>,
    pub kind: Kind,
}

fn native_is_little() -> bool {
    cfg!(target_endian = "little")
}

fn get_usize(obj: &Map<String, Value>, key: &str) -> PResult<Option<usize>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if v <= (isize::MAX as u64) => Ok(Some(v as usize)),
            _ => invalid(format!("'{key}' must be a non-negative integer, found {n}")),
        },
        Some(v) => invalid(format!("'{key}' must be an integer, found {v}")),
    }
}

fn get_i64(obj: &Map<String, Value>, key: &str) -> PResult<Option<i64>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(v) => Ok(Some(v)),
            None => invalid(format!("'{key}' must be an integer, found {n}")),
        },
        Some(v) => invalid(format!("'{key}' must be an integer, found {v}")),
    }
}

fn get_shape(obj: &Map<String, Value>, key: &str) -> PResult<Vec<usize>> {
    let Some(Value::Array(items)) = obj.get(key) else {
        return invalid(format!("'{key}' must be a list of integers"));
    };
    let mut shape = Vec::with_capacity(items.len());
    for item in items {
        match item.as_u64() {
            Some(v) if v > 0 && v <= (u32::MAX as u64) => shape.push(v as usize),
            _ => return invalid(format!("'{key}' must hold positive integers, found {item}")),
        }
    }
    Ok(shape)
}

fn level_in(name: &str, v: Option<i64>, default: i64, low: i64, high: i64) -> PResult<i64> {
    let v = v.unwrap_or(default);
    if v < low || v > high {
        return invalid(format!("codec '{name}': level {v} is outside {low}..{high}"));
    }
    Ok(v)
}

/// (name, configuration) of a v3 codec entry (`"bytes"` or `{"name": ..., ...}`).
fn codec_entry(entry: &Value) -> PResult<(String, Map<String, Value>)> {
    match entry {
        Value::String(s) => Ok((s.clone(), Map::new())),
        Value::Object(o) => {
            let Some(Value::String(name)) = o.get("name") else {
                return invalid(format!("a codec needs a 'name', found {entry}"));
            };
            let config = match o.get("configuration") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(c)) => c.clone(),
                Some(v) => return invalid(format!("codec '{name}': bad configuration {v}")),
            };
            Ok((name.clone(), config))
        }
        _ => invalid(format!("bad codec entry {entry}")),
    }
}

fn blosc_codec(config: &Map<String, Value>, itemsize: usize, v2: bool) -> PResult<Codec> {
    let cname = match config.get("cname") {
        None => if v2 { "lz4" } else { "zstd" }.to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => return invalid(format!("codec 'blosc': bad cname {v}")),
    };
    if !matches!(cname.as_str(), "lz4" | "lz4hc" | "blosclz" | "zstd" | "zlib")
        || !codecs::blosc_has(&cname)
    {
        return unsupported(format!("blosc compressor {cname:?}"));
    }
    let clevel = level_in("blosc", get_i64(config, "clevel")?, 5, 0, 9)? as i32;
    let typesize = get_usize(config, "typesize")?.unwrap_or(itemsize.max(1));
    if typesize == 0 || typesize > i32::MAX as usize {
        return invalid(format!("codec 'blosc': bad typesize {typesize}"));
    }
    let shuffle = match config.get("shuffle") {
        None | Some(Value::Null) => {
            if v2 {
                1
            } else if typesize == 1 {
                2
            } else {
                1
            }
        }
        Some(Value::String(s)) => match s.as_str() {
            "noshuffle" => 0,
            "shuffle" => 1,
            "bitshuffle" => 2,
            _ => return invalid(format!("codec 'blosc': bad shuffle {s:?}")),
        },
        Some(Value::Number(n)) => match n.as_i64() {
            // numcodecs' AUTOSHUFFLE: bit shuffle for one-byte items, else byte shuffle.
            Some(-1) if v2 => {
                if typesize == 1 {
                    2
                } else {
                    1
                }
            }
            Some(v @ 0..=2) => v as i32,
            _ => return invalid(format!("codec 'blosc': bad shuffle {n}")),
        },
        Some(v) => return invalid(format!("codec 'blosc': bad shuffle {v}")),
    };
    let blocksize = get_usize(config, "blocksize")?.unwrap_or(0);
    if blocksize > i32::MAX as usize {
        return invalid(format!("codec 'blosc': bad blocksize {blocksize}"));
    }
    Ok(Codec::Blosc(Blosc {
        cname: CString::new(cname).expect("no NUL in a checked name"),
        clevel,
        shuffle,
        typesize,
        blocksize,
    }))
}

fn zstd_codec(config: &Map<String, Value>, default_level: i64) -> PResult<Codec> {
    let level = level_in("zstd", get_i64(config, "level")?, default_level, -131072, 22)? as i32;
    let checksum = match config.get("checksum") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => return invalid(format!("codec 'zstd': bad checksum {v}")),
    };
    Ok(Codec::Zstd { level, checksum })
}

/// The unit of a byte swap for a numpy type string such as `">c16"`.
fn swap_unit(dtype: Option<&str>, itemsize: usize) -> PResult<usize> {
    let Some(d) = dtype else {
        return unsupported("a byte swap needs the array's 'dtype' (numpy's dtype.str)");
    };
    let kind = d.trim_start_matches(['<', '>', '|', '=']).chars().next().unwrap_or('?');
    match kind {
        'i' | 'u' | 'f' | 'm' | 'M' => Ok(itemsize),
        'c' if itemsize.is_multiple_of(2) => Ok(itemsize / 2),
        'b' | 'S' => Ok(0),
        'U' => Ok(4),
        _ => unsupported(format!("a byte swap of data type {d:?}")),
    }
}

fn c_strides(shape: &[usize], itemsize: usize) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut acc = itemsize;
    for k in (0..shape.len()).rev() {
        strides[k] = acc;
        acc = acc.saturating_mul(shape[k]);
    }
    strides
}

impl Plain {
    fn new(
        itemsize: usize,
        shape: Vec<usize>,
        perm: Vec<usize>,
        swap: usize,
        codecs: Vec<Codec>,
    ) -> PResult<Plain> {
        let count = shape.iter().try_fold(1usize, |a, &s| a.checked_mul(s));
        let nbytes = match count.and_then(|c| c.checked_mul(itemsize)) {
            Some(n) if n <= (isize::MAX as usize) / 2 => n,
            _ => return invalid("chunk too large"),
        };
        let encoded_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let encoded_strides = c_strides(&encoded_shape, itemsize);
        let mut strides = vec![0; shape.len()];
        for (k, &p) in perm.iter().enumerate() {
            strides[p] = encoded_strides[k];
        }
        let mut bounds = Vec::with_capacity(codecs.len());
        let mut bound = nbytes;
        for codec in &codecs {
            bounds.push(bound);
            bound = codec.max_encoded(bound);
        }
        Ok(Plain { itemsize, shape, strides, perm, swap, codecs, bounds, nbytes })
    }

    /// The chunk's decoded bytes (`nbytes` of them, in stored order and byte order).
    pub fn decode<'a>(&self, src: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        let Some((first, rest)) = self.codecs.split_first() else {
            if src.len() != self.nbytes {
                return Err(format!("{} bytes, expected {}", src.len(), self.nbytes));
            }
            return Ok(Cow::Borrowed(src));
        };
        let mut cur = Cow::Borrowed(src);
        for (codec, &bound) in rest.iter().zip(&self.bounds[1..]).rev() {
            cur = codec.decode_bounded(cur, bound)?;
        }
        if let Codec::Crc32c = first {
            let n = codecs::crc_check(&cur)?.len();
            if n != self.nbytes {
                return Err(format!("{n} bytes, expected {}", self.nbytes));
            }
            return Ok(match cur {
                Cow::Borrowed(s) => Cow::Borrowed(&s[..n]),
                Cow::Owned(mut v) => {
                    v.truncate(n);
                    Cow::Owned(v)
                }
            });
        }
        let mut out = vec![0u8; self.nbytes];
        first.decode_exact(&cur, &mut out)?;
        Ok(Cow::Owned(out))
    }

    /// Call `f` with the chunk's decoded bytes (as `decode`), decoded into this thread's
    /// reusable buffer when the chain ends in a decompressor: a batch of chunks of 1 MiB and
    /// more otherwise maps, faults in and unmaps fresh memory for every one of them.
    pub fn with_decoded<R>(&self, src: &[u8], f: impl FnOnce(&[u8]) -> R) -> Result<R> {
        let Some((first, rest)) = self.codecs.split_first() else {
            return self.decode(src).map(|d| f(&d));
        };
        if matches!(first, Codec::Crc32c) || self.nbytes > SCRATCH_MAX {
            return self.decode(src).map(|d| f(&d));
        }
        let mut cur = Cow::Borrowed(src);
        for (codec, &bound) in rest.iter().zip(&self.bounds[1..]).rev() {
            cur = codec.decode_bounded(cur, bound)?;
        }
        SCRATCH.with(|cell| {
            // Never re-entered (f only copies), but a fresh buffer is the safe answer if it were.
            let mut fresh = Vec::new();
            let mut held = cell.try_borrow_mut();
            let buf = match held {
                Ok(ref mut b) => &mut **b,
                Err(_) => &mut fresh,
            };
            if buf.len() < self.nbytes {
                buf.resize(self.nbytes, 0);
            }
            let out = &mut buf[..self.nbytes];
            first.decode_exact(&cur, out)?;
            Ok(f(out))
        })
    }

    /// Encode a chunk's bytes already in stored order and byte order.
    pub fn encode(&self, raw: &[u8]) -> Result<Vec<u8>> {
        let Some((first, rest)) = self.codecs.split_first() else {
            return Ok(raw.to_vec());
        };
        let mut data = first.encode(raw)?;
        for codec in rest {
            data = codec.encode(&data)?;
        }
        Ok(data)
    }

    /// Call `f` with this thread's reusable buffer of `nbytes` (its contents stale): the
    /// encoder gathers each chunk into it, without fresh memory to fault in per chunk.
    pub fn with_scratch<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> R {
        if self.nbytes > SCRATCH_MAX {
            return f(&mut vec![0u8; self.nbytes]);
        }
        GATHER.with(|cell| match cell.try_borrow_mut() {
            Ok(mut buf) => {
                if buf.len() < self.nbytes {
                    buf.resize(self.nbytes, 0);
                }
                f(&mut buf[..self.nbytes])
            }
            Err(_) => f(&mut vec![0u8; self.nbytes]),
        })
    }
}

impl Sharded {
    pub fn count(&self) -> usize {
        self.chunks_per_shard.iter().product()
    }

    /// The index entries (offset, nbytes) of a shard, from its encoded index bytes.
    pub fn decode_index(&self, raw: &[u8]) -> Result<Vec<(u64, u64)>> {
        if raw.len() != self.index_nbytes {
            return Err(format!(
                "shard index needs {} bytes, found {}",
                self.index_nbytes,
                raw.len()
            ));
        }
        let body = if self.index_crc {
            codecs::crc_check(raw).map_err(|e| format!("(shard index): {e}"))?
        } else {
            raw
        };
        let word = |b: &[u8]| {
            let a: [u8; 8] = b.try_into().expect("8 bytes");
            if self.index_big {
                u64::from_be_bytes(a)
            } else {
                u64::from_le_bytes(a)
            }
        };
        Ok(body.chunks_exact(16).map(|p| (word(&p[..8]), word(&p[8..]))).collect())
    }

    /// Check every entry: both or neither of (offset, nbytes) empty, stored ranges inside a
    /// shard of `shard_len` bytes.
    pub fn check_index(&self, entries: &[(u64, u64)], shard_len: u64) -> Result<()> {
        for (i, &(offset, nbytes)) in entries.iter().enumerate() {
            let (oe, ne) = (offset == EMPTY, nbytes == EMPTY);
            if oe != ne {
                return Err(format!(
                    "shard index entry of inner chunk {} is malformed (only one of offset and \
                     nbytes marks it empty)",
                    coords_repr(&self.unravel(i))
                ));
            }
            if oe {
                continue;
            }
            if offset > shard_len || nbytes > shard_len - offset {
                return Err(format!(
                    "inner chunk {} at bytes [{}, {}) lies past the end of the {}-byte shard",
                    coords_repr(&self.unravel(i)),
                    offset,
                    offset as u128 + nbytes as u128,
                    shard_len
                ));
            }
        }
        Ok(())
    }

    pub fn encode_index(&self, entries: &[(u64, u64)]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.index_nbytes);
        for &(o, n) in entries {
            if self.index_big {
                out.extend_from_slice(&o.to_be_bytes());
                out.extend_from_slice(&n.to_be_bytes());
            } else {
                out.extend_from_slice(&o.to_le_bytes());
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        if self.index_crc {
            let crc = crc32c::crc32c(&out);
            out.extend_from_slice(&crc.to_le_bytes());
        }
        out
    }

    pub fn unravel(&self, mut linear: usize) -> Vec<usize> {
        let mut coords = vec![0; self.chunks_per_shard.len()];
        for k in (0..coords.len()).rev() {
            let n = self.chunks_per_shard[k];
            coords[k] = linear % n;
            linear /= n;
        }
        coords
    }

    pub fn ravel(&self, coords: &[usize]) -> Option<usize> {
        if coords.len() != self.chunks_per_shard.len() {
            return None;
        }
        let mut linear = 0usize;
        for (&c, &n) in coords.iter().zip(&self.chunks_per_shard) {
            if c >= n {
                return None;
            }
            linear = linear * n + c;
        }
        Some(linear)
    }
}

/// Coordinates as Python writes a tuple: `(1,)`, `(0, 2)`.
pub fn coords_repr(coords: &[usize]) -> String {
    match coords.len() {
        0 => "()".into(),
        1 => format!("({},)", coords[0]),
        _ => format!(
            "({})",
            coords.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// C-order indices of a grid of `cps` chunks sorted by their Morton code: coordinate bits
/// interleaved, dimension 0 lowest, dimensions that have run out of bits skipped (as
/// zarr-python and zarrkit's `morton_rank`).
pub fn morton_order(cps: &[usize]) -> Vec<usize> {
    let count: usize = cps.iter().product();
    let bits: Vec<u32> = cps
        .iter()
        .map(|&c| usize::BITS - c.saturating_sub(1).leading_zeros())
        .collect();
    let max_bits = bits.iter().copied().max().unwrap_or(0);
    let mut codes: Vec<(u128, usize)> = Vec::with_capacity(count);
    let mut coords = vec![0usize; cps.len()];
    for linear in 0..count {
        let mut rest = linear;
        for k in (0..cps.len()).rev() {
            coords[k] = rest % cps[k];
            rest /= cps[k];
        }
        let mut code: u128 = 0;
        let mut out_bit = 0;
        for coord_bit in 0..max_bits {
            for (dim, &b) in bits.iter().enumerate() {
                if coord_bit < b {
                    code |= (((coords[dim] >> coord_bit) & 1) as u128) << out_bit;
                    out_bit += 1;
                }
            }
        }
        codes.push((code, linear));
    }
    codes.sort();
    codes.into_iter().map(|(_, l)| l).collect()
}

impl Chain {
    pub fn parse(description: &str, fill: &[u8]) -> PResult<Chain> {
        let value: Value = serde_json::from_str(description)
            .map_err(|e| ParseError::Invalid(format!("description is not JSON: {e}")))?;
        let Value::Object(d) = value else {
            return invalid("description must be a JSON object");
        };
        let itemsize = match get_usize(&d, "itemsize")? {
            Some(n) if n > 0 && n <= 1 << 20 => n,
            _ => return invalid("'itemsize' must be a positive integer"),
        };
        if fill.len() != itemsize {
            return invalid(format!(
                "fill has {} bytes, expected the itemsize {itemsize}",
                fill.len()
            ));
        }
        let chunk_shape = get_shape(&d, "chunk_shape")?;
        let dtype = match d.get("dtype") {
            Some(Value::String(s)) => Some(s.as_str()),
            _ => None,
        };
        let kind = match get_usize(&d, "format")? {
            Some(2) => Kind::Plain(parse_v2(&d, itemsize, &chunk_shape)?),
            Some(3) => {
                let Some(Value::Array(codecs)) = d.get("codecs") else {
                    return invalid("'codecs' must be a list");
                };
                parse_v3(codecs, itemsize, &chunk_shape, dtype, true)?
            }
            _ => return invalid("'format' must be 2 or 3"),
        };
        Ok(Chain { itemsize, chunk_shape, fill: fill.to_vec(), kind })
    }

    /// True when `data` (a whole number of items) is the fill pattern repeated.
    pub fn is_fill(&self, data: &[u8]) -> bool {
        let n = self.itemsize;
        if n == 1 {
            let f = self.fill[0];
            return data.iter().all(|&b| b == f);
        }
        data.chunks_exact(n).all(|item| item == &self.fill[..])
    }
}

fn parse_v2(d: &Map<String, Value>, itemsize: usize, shape: &[usize]) -> PResult<Plain> {
    match d.get("filters") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) if a.is_empty() => {}
        Some(_) => return unsupported("v2 filters"),
    }
    let ndim = shape.len();
    let perm: Vec<usize> = match d.get("order") {
        None => (0..ndim).collect(),
        Some(Value::String(s)) if s == "C" => (0..ndim).collect(),
        Some(Value::String(s)) if s == "F" => (0..ndim).rev().collect(),
        Some(v) => return invalid(format!("bad order {v}")),
    };
    let codecs = match d.get("compressor") {
        None | Some(Value::Null) => vec![],
        Some(Value::Object(c)) => {
            let Some(Value::String(id)) = c.get("id") else {
                return invalid("a compressor needs an 'id'");
            };
            let codec = match id.as_str() {
                "blosc" => blosc_codec(c, itemsize, true)?,
                "zstd" => zstd_codec(c, 1)?,
                "zlib" => Codec::Zlib { level: level_in("zlib", get_i64(c, "level")?, 1, 0, 9)? as u32 },
                "gzip" => Codec::Gzip { level: level_in("gzip", get_i64(c, "level")?, 1, 0, 9)? as u32 },
                "lz4" => {
                    let acc = get_i64(c, "acceleration")?.unwrap_or(1);
                    if !(i32::MIN as i64..=i32::MAX as i64).contains(&acc) {
                        return invalid("codec 'lz4': bad acceleration");
                    }
                    Codec::Lz4 { acceleration: acc as i32 }
                }
                other => return unsupported(format!("v2 compressor {other:?}")),
            };
            vec![codec]
        }
        Some(v) => return invalid(format!("bad compressor {v}")),
    };
    Plain::new(itemsize, shape.to_vec(), perm, 0, codecs)
}

fn parse_v3(
    codecs: &[Value],
    itemsize: usize,
    shape: &[usize],
    dtype: Option<&str>,
    outer: bool,
) -> PResult<Kind> {
    let ndim = shape.len();
    let mut perm: Vec<usize> = (0..ndim).collect();
    let mut bytes_seen = false;
    let mut swap = 0usize;
    let mut bb: Vec<Codec> = vec![];
    for (pos, entry) in codecs.iter().enumerate() {
        let (name, config) = codec_entry(entry)?;
        match (name.as_str(), bytes_seen) {
            ("sharding_indexed", false) => {
                if !outer {
                    return unsupported("sharding inside sharding");
                }
                if codecs.len() != 1 || pos != 0 {
                    return unsupported("codecs around sharding_indexed");
                }
                return Ok(Kind::Sharded(parse_sharding(&config, itemsize, shape, dtype)?));
            }
            ("transpose", false) => {
                let order: Vec<usize> = match config.get("order") {
                    Some(Value::String(s)) if s == "C" => (0..ndim).collect(),
                    Some(Value::String(s)) if s == "F" => (0..ndim).rev().collect(),
                    Some(Value::Array(a)) => {
                        let mut o = Vec::with_capacity(a.len());
                        for v in a {
                            match v.as_u64() {
                                Some(i) if (i as usize) < ndim => o.push(i as usize),
                                _ => return invalid(format!("transpose: bad order {a:?}")),
                            }
                        }
                        o
                    }
                    _ => return invalid("transpose: 'order' is required"),
                };
                let mut sorted = order.clone();
                sorted.sort_unstable();
                if sorted != (0..ndim).collect::<Vec<_>>() {
                    return invalid(format!("transpose: {order:?} is not a permutation"));
                }
                perm = order.iter().map(|&o| perm[o]).collect();
            }
            ("bytes", false) => {
                bytes_seen = true;
                let endian = match config.get("endian") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) if s == "little" || s == "big" => Some(s.as_str()),
                    Some(v) => return invalid(format!("bytes: bad endian {v}")),
                };
                if itemsize > 1 {
                    let Some(endian) = endian else {
                        return unsupported("'bytes' without 'endian' for multi-byte items");
                    };
                    if (endian == "little") != native_is_little() {
                        swap = swap_unit(dtype, itemsize)?;
                        if swap == 1 {
                            swap = 0;
                        }
                    }
                }
            }
            ("blosc", true) => bb.push(blosc_codec(&config, itemsize, false)?),
            ("zstd", true) => bb.push(zstd_codec(&config, 0)?),
            ("gzip", true) => bb.push(Codec::Gzip {
                level: level_in("gzip", get_i64(&config, "level")?, 5, 0, 9)? as u32,
            }),
            ("crc32c", true) => bb.push(Codec::Crc32c),
            (other, _) => return unsupported(format!("codec {other:?} at this place")),
        }
    }
    if !bytes_seen {
        return unsupported("a chain without the 'bytes' codec");
    }
    Ok(Kind::Plain(Plain::new(itemsize, shape.to_vec(), perm, swap, bb)?))
}

fn parse_sharding(
    config: &Map<String, Value>,
    itemsize: usize,
    shard_shape: &[usize],
    dtype: Option<&str>,
) -> PResult<Sharded> {
    let inner_shape = get_shape(config, "chunk_shape")?;
    if inner_shape.len() != shard_shape.len() {
        return invalid("sharding: chunk_shape has the wrong number of dimensions");
    }
    let mut cps = Vec::with_capacity(inner_shape.len());
    for (&s, &c) in shard_shape.iter().zip(&inner_shape) {
        if s % c != 0 {
            return invalid(format!(
                "sharding: inner chunk shape {inner_shape:?} does not divide {shard_shape:?}"
            ));
        }
        cps.push(s / c);
    }
    let count = cps.iter().try_fold(1usize, |a, &c| a.checked_mul(c));
    let count = match count {
        Some(c) if c <= 1 << 26 => c,
        _ => return unsupported("more than 2^26 inner chunks per shard"),
    };
    let Some(Value::Array(codecs)) = config.get("codecs") else {
        return invalid("sharding: 'codecs' must be a list");
    };
    let inner = match parse_v3(codecs, itemsize, &inner_shape, dtype, false)? {
        Kind::Plain(p) => p,
        Kind::Sharded(_) => return unsupported("sharding inside sharding"),
    };
    let default_index = vec![
        serde_json::json!({"name": "bytes", "configuration": {"endian": "little"}}),
        serde_json::json!({"name": "crc32c"}),
    ];
    let index_codecs = match config.get("index_codecs") {
        None | Some(Value::Null) => default_index,
        Some(Value::Array(a)) => a.clone(),
        Some(v) => return invalid(format!("sharding: bad index_codecs {v}")),
    };
    let mut index_big = false;
    let mut index_crc = false;
    for (pos, entry) in index_codecs.iter().enumerate() {
        let (name, c) = codec_entry(entry)?;
        match (pos, name.as_str()) {
            (0, "bytes") => {
                index_big = match c.get("endian") {
                    Some(Value::String(s)) if s == "big" => true,
                    Some(Value::String(s)) if s == "little" => false,
                    None => false,
                    Some(v) => return invalid(format!("bytes: bad endian {v}")),
                }
            }
            (1, "crc32c") => index_crc = true,
            _ => return unsupported(format!("index codecs {index_codecs:?}")),
        }
    }
    if index_codecs.is_empty() {
        return invalid("sharding: empty index_codecs");
    }
    let index_start = match config.get("index_location") {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) if s == "end" => false,
        Some(Value::String(s)) if s == "start" => true,
        Some(v) => return invalid(format!("sharding: bad index_location {v}")),
    };
    let index_nbytes = count * 16 + if index_crc { 4 } else { 0 };
    Ok(Sharded {
        inner,
        shard_shape: shard_shape.to_vec(),
        morton: std::sync::OnceLock::new(),
        chunks_per_shard: cps,
        index_crc,
        index_big,
        index_start,
        index_nbytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morton_matches_python() {
        // morton_rank((2, 3)) == [[0, 2, 4], [1, 3, 5]]: rank r at C index -> order
        assert_eq!(morton_order(&[2, 3]), vec![0, 3, 1, 4, 2, 5]);
    }

    #[test]
    fn coords() {
        assert_eq!(coords_repr(&[1]), "(1,)");
        assert_eq!(coords_repr(&[0, 2]), "(0, 2)");
    }
}
