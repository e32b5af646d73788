//! The bytes -> bytes codecs: blosc (c-blosc, through its thread-safe `_ctx` calls), zstd,
//! gzip and zlib (zlib through flate2), lz4 (numcodecs' framing: a 4-byte little-endian
//! decoded size, then one LZ4 block) and crc32c.
//!
//! Every decoder writes into an output whose size is known before it runs: the exact size
//! of the chunk for the innermost codec, a bound derived from it for the others. No decoder
//! allocates what a stored header claims before that claim is checked against the bound.

use std::borrow::Cow;
use std::ffi::CString;
use std::io::Read;
use std::os::raw::{c_char, c_int, c_void};

pub type Result<T> = std::result::Result<T, String>;

/// c-blosc's header and worst-case overhead (`BLOSC_MIN_HEADER_LENGTH`, `BLOSC_MAX_OVERHEAD`).
const BLOSC_HEADER: usize = 16;
/// c-blosc handles buffers up to `INT_MAX - BLOSC_MAX_OVERHEAD` bytes.
const BLOSC_MAX_BUFFER: usize = (i32::MAX as usize) - BLOSC_HEADER;

#[derive(Debug, Clone)]
pub struct Blosc {
    pub cname: CString,
    pub clevel: i32,
    /// 0 noshuffle, 1 shuffle, 2 bitshuffle (c-blosc's codes).
    pub shuffle: i32,
    pub typesize: usize,
    pub blocksize: usize,
}

#[derive(Debug, Clone)]
pub enum Codec {
    Blosc(Blosc),
    Zstd { level: i32, checksum: bool },
    Gzip { level: u32 },
    Zlib { level: u32 },
    Lz4 { acceleration: i32 },
    Crc32c,
}

impl Codec {
    /// A bound on the encoded size of `n` input bytes (generous: it only caps what a
    /// decoder of the next codec out may produce).
    pub fn max_encoded(&self, n: usize) -> usize {
        let slack = n / 8 + n / 64 + 64;
        match self {
            Codec::Blosc(_) => n.saturating_add(BLOSC_HEADER),
            Codec::Zstd { .. } => zstd_safe::compress_bound(n).saturating_add(64),
            Codec::Gzip { .. } | Codec::Zlib { .. } => n.saturating_add(slack),
            Codec::Lz4 { .. } => n.saturating_add(n / 255 + 16 + 4),
            Codec::Crc32c => n.saturating_add(4),
        }
    }

    /// Decode `src` into exactly `dst.len()` bytes (the innermost codec of a chain).
    pub fn decode_exact(&self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        match self {
            Codec::Blosc(_) => blosc_decode(src, dst),
            Codec::Zstd { .. } => {
                let n = zstd_decode(src, dst)?;
                exact(n, dst.len(), "zstd")
            }
            Codec::Gzip { .. } => {
                let n = read_bounded(flate2::read::MultiGzDecoder::new(src), dst, "gzip")?;
                exact(n, dst.len(), "gzip")
            }
            Codec::Zlib { .. } => {
                let n = read_bounded(flate2::read::ZlibDecoder::new(src), dst, "zlib")?;
                exact(n, dst.len(), "zlib")
            }
            Codec::Lz4 { .. } => lz4_decode(src, dst),
            Codec::Crc32c => {
                let payload = crc_check(src)?;
                exact(payload.len(), dst.len(), "crc32c")?;
                dst.copy_from_slice(payload);
                Ok(())
            }
        }
    }

    /// Decode `src` into at most `bound` bytes (a codec that is not the innermost one).
    pub fn decode_bounded<'a>(&self, src: Cow<'a, [u8]>, bound: usize) -> Result<Cow<'a, [u8]>> {
        match self {
            Codec::Crc32c => {
                let n = crc_check(&src)?.len();
                if n > bound {
                    return Err(too_large("crc32c", n, bound));
                }
                Ok(match src {
                    Cow::Borrowed(s) => Cow::Borrowed(&s[..n]),
                    Cow::Owned(mut v) => {
                        v.truncate(n);
                        Cow::Owned(v)
                    }
                })
            }
            Codec::Blosc(_) => {
                let claimed = blosc_validate(&src)?;
                if claimed > bound {
                    return Err(too_large("blosc", claimed, bound));
                }
                let mut out = vec![0u8; claimed];
                blosc_decode(&src, &mut out)?;
                Ok(Cow::Owned(out))
            }
            Codec::Lz4 { .. } => {
                let claimed = lz4_claimed(&src)?;
                if claimed > bound {
                    return Err(too_large("lz4", claimed, bound));
                }
                let mut out = vec![0u8; claimed];
                lz4_decode(&src, &mut out)?;
                Ok(Cow::Owned(out))
            }
            Codec::Zstd { .. } => {
                let mut out = vec![0u8; bound];
                let n = zstd_decode(&src, &mut out)?;
                out.truncate(n);
                Ok(Cow::Owned(out))
            }
            Codec::Gzip { .. } => {
                let mut out = vec![0u8; bound];
                let n = read_bounded(flate2::read::MultiGzDecoder::new(&src[..]), &mut out, "gzip")?;
                out.truncate(n);
                Ok(Cow::Owned(out))
            }
            Codec::Zlib { .. } => {
                let mut out = vec![0u8; bound];
                let n = read_bounded(flate2::read::ZlibDecoder::new(&src[..]), &mut out, "zlib")?;
                out.truncate(n);
                Ok(Cow::Owned(out))
            }
        }
    }

    pub fn encode(&self, src: &[u8]) -> Result<Vec<u8>> {
        match self {
            Codec::Blosc(b) => blosc_encode(b, src),
            Codec::Zstd { level, checksum } => zstd_encode(src, *level, *checksum),
            Codec::Gzip { level } => gzip_encode(src, *level),
            Codec::Zlib { level } => deflate(src, *level, true, Vec::new()),
            Codec::Lz4 { acceleration } => lz4_encode(src, *acceleration),
            Codec::Crc32c => {
                let mut out = Vec::with_capacity(src.len() + 4);
                out.extend_from_slice(src);
                out.extend_from_slice(&crc32c::crc32c(src).to_le_bytes());
                Ok(out)
            }
        }
    }
}

fn exact(n: usize, expected: usize, name: &str) -> Result<()> {
    if n != expected {
        return Err(format!("{name} decoded to {n} bytes, expected {expected}"));
    }
    Ok(())
}

fn too_large(name: &str, n: usize, bound: usize) -> String {
    format!("{name} would decode to {n} bytes, more than the {bound} expected at most")
}

// --- crc32c ---------------------------------------------------------------------------------

/// The payload of `src` after checking its trailing little-endian CRC32C.
pub fn crc_check(src: &[u8]) -> Result<&[u8]> {
    if src.len() < 4 {
        return Err(format!("{} bytes is too short for a crc32c checksum", src.len()));
    }
    let (payload, tail) = src.split_at(src.len() - 4);
    let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let computed = crc32c::crc32c(payload);
    if stored != computed {
        return Err(format!(
            "crc32c checksum mismatch (stored 0x{stored:08x}, computed 0x{computed:08x})"
        ));
    }
    Ok(payload)
}

// --- streams (gzip, zlib) -------------------------------------------------------------------

/// Read `reader` into `dst`; an error if the stream holds more than `dst.len()` bytes.
fn read_bounded<R: Read>(mut reader: R, dst: &mut [u8], name: &str) -> Result<usize> {
    let mut filled = 0;
    while filled < dst.len() {
        match reader.read(&mut dst[filled..]) {
            Ok(0) => return Ok(filled),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
    let mut probe = [0u8; 1];
    loop {
        match reader.read(&mut probe) {
            Ok(0) => return Ok(filled),
            Ok(_) => {
                return Err(format!(
                    "{name} decodes to more than the {} bytes expected",
                    dst.len()
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
}

/// gzip as Python's `gzip.GzipFile` writes it (numcodecs' GZip): a 10-byte header with no
/// name, XFL 2 for level 9 and 4 for level 1, OS 255; raw deflate at `level` with zlib's
/// default memory level; CRC32 and size. The modification time is 0 (Python writes the
/// current time there, so only those 4 bytes can differ).
fn gzip_encode(src: &[u8], level: u32) -> Result<Vec<u8>> {
    let xfl = match level {
        9 => 2u8,
        1 => 4u8,
        _ => 0u8,
    };
    let header = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 255];
    let mut out = deflate(src, level, false, header)?;
    let mut crc = flate2::Crc::new();
    crc.update(src);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(src.len() as u32).to_le_bytes());
    Ok(out)
}

/// Deflate `src` in one call with Z_FINISH, as Python's `zlib.compress` and `gzip` do (at
/// level 0 the block layout depends on how the input is fed), appended to `out`.
fn deflate(src: &[u8], level: u32, zlib_header: bool, mut out: Vec<u8>) -> Result<Vec<u8>> {
    let mut c = flate2::Compress::new(flate2::Compression::new(level), zlib_header);
    out.reserve(src.len() + src.len() / 1000 * 5 + 64);
    loop {
        let consumed = c.total_in() as usize;
        let status = c
            .compress_vec(&src[consumed..], &mut out, flate2::FlushCompress::Finish)
            .map_err(|e| format!("deflate: {e}"))?;
        match status {
            flate2::Status::StreamEnd => return Ok(out),
            _ => out.reserve(out.capacity().max(1024)),
        }
    }
}

// --- zstd -----------------------------------------------------------------------------------

thread_local! {
    // One zstd context per thread, reused: making one costs more than decoding a small chunk.
    static DCTX: std::cell::RefCell<zstd_safe::DCtx<'static>> =
        std::cell::RefCell::new(zstd_safe::DCtx::create());
    static CCTX: std::cell::RefCell<zstd_safe::CCtx<'static>> =
        std::cell::RefCell::new(zstd_safe::CCtx::create());
}

fn zstd_decode(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    DCTX.with(|d| {
        let mut dctx = d.borrow_mut();
        // A failed frame may leave the context mid-way: start from a clean session.
        let _ = dctx.reset(zstd_safe::ResetDirective::SessionOnly);
        dctx.decompress(dst, src)
            .map_err(|code| format!("zstd: {}", zstd_safe::get_error_name(code)))
    })
}

fn zstd_encode(src: &[u8], level: i32, checksum: bool) -> Result<Vec<u8>> {
    let err = |code| format!("zstd: {}", zstd_safe::get_error_name(code));
    CCTX.with(|c| {
        let mut cctx = c.borrow_mut();
        cctx.reset(zstd_safe::ResetDirective::SessionAndParameters).map_err(err)?;
        cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level)).map_err(err)?;
        cctx.set_parameter(zstd_safe::CParameter::ChecksumFlag(checksum)).map_err(err)?;
        let mut out: Vec<u8> = Vec::with_capacity(zstd_safe::compress_bound(src.len()));
        cctx.compress2(&mut out, src).map_err(err)?;
        Ok(out)
    })
}

// --- lz4 (numcodecs framing) ----------------------------------------------------------------

fn lz4_claimed(src: &[u8]) -> Result<usize> {
    if src.len() < 4 {
        return Err(format!("{} bytes is too short for an lz4 chunk", src.len()));
    }
    let n = i32::from_le_bytes([src[0], src[1], src[2], src[3]]);
    if n < 0 {
        return Err(format!("lz4 header claims a negative size {n}"));
    }
    Ok(n as usize)
}

fn lz4_decode(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let claimed = lz4_claimed(src)?;
    if claimed != dst.len() {
        return Err(format!("lz4 header claims {claimed} bytes, expected {}", dst.len()));
    }
    let body = &src[4..];
    if body.len() > i32::MAX as usize || dst.len() > i32::MAX as usize {
        return Err("lz4 chunk too large".into());
    }
    // SAFETY: LZ4_decompress_safe reads at most `body.len()` bytes of `body` and writes at
    // most `dst.len()` bytes to `dst` (its documented guarantee for any input).
    let n = unsafe {
        lz4_sys::LZ4_decompress_safe(
            body.as_ptr() as *const c_char,
            dst.as_mut_ptr() as *mut c_char,
            body.len() as c_int,
            dst.len() as c_int,
        )
    };
    if n < 0 {
        return Err("lz4: corrupt data".into());
    }
    exact(n as usize, dst.len(), "lz4")
}

fn lz4_encode(src: &[u8], acceleration: i32) -> Result<Vec<u8>> {
    if src.len() > 0x7E00_0000 {
        return Err("lz4: chunk too large".into());
    }
    // SAFETY: a pure function of its argument.
    let bound = unsafe { lz4_sys::LZ4_compressBound(src.len() as c_int) };
    if bound <= 0 {
        return Err("lz4: chunk too large".into());
    }
    let mut out = vec![0u8; 4 + bound as usize];
    out[..4].copy_from_slice(&(src.len() as u32).to_le_bytes());
    // SAFETY: reads `src.len()` bytes of `src`, writes at most `bound` bytes after the prefix.
    let n = unsafe {
        lz4_sys::LZ4_compress_fast(
            src.as_ptr() as *const c_char,
            out.as_mut_ptr().add(4) as *mut c_char,
            src.len() as c_int,
            bound,
            acceleration,
        )
    };
    if n <= 0 && !src.is_empty() {
        return Err("lz4: compression failed".into());
    }
    out.truncate(4 + n.max(0) as usize);
    Ok(out)
}

// --- blosc ----------------------------------------------------------------------------------

/// The decoded size that a blosc chunk's header claims, after c-blosc's own validation
/// of the header against the buffer's length.
fn blosc_validate(src: &[u8]) -> Result<usize> {
    if src.len() < BLOSC_HEADER {
        return Err(format!("{} bytes is too short for a blosc chunk", src.len()));
    }
    let mut nbytes: usize = 0;
    // SAFETY: c-blosc reads the 16-byte header (present, checked above) and compares the
    // sizes it claims with `src.len()`.
    let rc = unsafe {
        blosc_src::blosc_cbuffer_validate(src.as_ptr() as *const c_void, src.len(), &mut nbytes)
    };
    if rc != 0 {
        return Err("blosc: invalid header".into());
    }
    Ok(nbytes)
}

fn blosc_decode(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let claimed = blosc_validate(src)?;
    if claimed != dst.len() {
        return Err(format!("blosc header claims {claimed} bytes, expected {}", dst.len()));
    }
    if dst.is_empty() {
        return Ok(());
    }
    // SAFETY: the header was validated against `src.len()`; c-blosc writes at most
    // `dst.len()` bytes ("guaranteed not to write the dest buffer beyond destsize").
    let n = unsafe {
        blosc_src::blosc_decompress_ctx(
            src.as_ptr() as *const c_void,
            dst.as_mut_ptr() as *mut c_void,
            dst.len(),
            1,
        )
    };
    if n < 0 || n as usize != dst.len() {
        return Err(format!("blosc: corrupt data (decoder returned {n})"));
    }
    Ok(())
}

fn blosc_encode(b: &Blosc, src: &[u8]) -> Result<Vec<u8>> {
    if src.len() > BLOSC_MAX_BUFFER {
        return Err(format!("blosc: {} bytes is more than c-blosc can compress", src.len()));
    }
    let cap = src.len() + BLOSC_HEADER;
    // Not zeroed: c-blosc writes what it returns, and only that is kept (set_len below).
    let mut out: Vec<u8> = Vec::with_capacity(cap);
    // SAFETY: reads `src.len()` bytes of `src`, writes at most `cap` bytes to `out`;
    // `cname` is a NUL-terminated string that outlives the call.
    let n = unsafe {
        blosc_src::blosc_compress_ctx(
            b.clevel as c_int,
            b.shuffle as c_int,
            b.typesize,
            src.len(),
            src.as_ptr() as *const c_void,
            out.as_mut_ptr() as *mut c_void,
            cap,
            b.cname.as_ptr(),
            b.blocksize,
            1,
        )
    };
    if n <= 0 || n as usize > cap {
        return Err(format!("blosc: compression failed ({n})"));
    }
    // SAFETY: c-blosc initialised the first `n` bytes (its return value), within capacity.
    unsafe { out.set_len(n as usize) };
    Ok(out)
}

/// The blosc compressors this build of c-blosc has.
pub fn blosc_has(cname: &str) -> bool {
    let Ok(c) = CString::new(cname) else { return false };
    // SAFETY: a NUL-terminated string; the call only looks the name up.
    unsafe { blosc_src::blosc_compname_to_compcode(c.as_ptr()) >= 0 }
}
