//! Reused zstd contexts for c-blosc.
//!
//! c-blosc 1.x compresses every block with `ZSTD_compress` and decompresses it with
//! `ZSTD_decompress`, and each of those builds a zstd context, clears its tables and frees it
//! again. For an 8 KiB block that is a fifth of the block's cost. The linker is asked
//! (`--wrap`, see `build.rs`) to send c-blosc's two calls here instead, where each thread keeps
//! one context of each kind. `ZSTD_compressCCtx` and `ZSTD_decompressDCtx` are zstd's own
//! "same as the plain call, with this context" functions, so the bytes do not change; the
//! equivalence tests (Python path through numcodecs' c-blosc) hold the engine to that.
//!
//! Where the linker cannot wrap (not Linux), these functions are simply never called.

use std::cell::RefCell;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use zstd_sys::{ZSTD_CCtx, ZSTD_DCtx};

struct Contexts {
    compress: *mut ZSTD_CCtx,
    decompress: *mut ZSTD_DCtx,
}

impl Contexts {
    fn new() -> Self {
        // SAFETY: plain constructors; a null result is handled where the context is used.
        unsafe {
            Contexts {
                compress: zstd_sys::ZSTD_createCCtx(),
                decompress: zstd_sys::ZSTD_createDCtx(),
            }
        }
    }
}

impl Drop for Contexts {
    fn drop(&mut self) {
        // SAFETY: both were made by `new` and are freed once; zstd accepts null.
        unsafe {
            zstd_sys::ZSTD_freeCCtx(self.compress);
            zstd_sys::ZSTD_freeDCtx(self.decompress);
        }
    }
}

/// c-blosc zstd calls that came here: a test's proof that the linker wrapped them.
static WRAPPED_CALLS: AtomicU64 = AtomicU64::new(0);

/// How many of c-blosc's zstd calls this build has sent to the reused contexts.
pub fn wrapped_calls() -> u64 {
    WRAPPED_CALLS.load(Ordering::Relaxed)
}

thread_local! {
    static CONTEXTS: RefCell<Contexts> = RefCell::new(Contexts::new());
}

/// `call` with this thread's contexts, held for the call alone, or None when they cannot
/// be had (the thread is exiting, or zstd had no memory for them): the caller then makes
/// one for the call.
fn with_contexts<R>(call: impl FnOnce(&Contexts) -> Option<R>) -> Option<R> {
    CONTEXTS
        .try_with(|contexts| contexts.try_borrow_mut().ok().and_then(|contexts| call(&contexts)))
        .ok()
        .flatten()
}

/// c-blosc's `ZSTD_compress`, on this thread's compression context.
///
/// # Safety
/// The contract of `ZSTD_compress`: `src` holds `src_size` readable bytes and `dst` has room
/// for `dst_capacity`.
#[no_mangle]
pub unsafe extern "C" fn __wrap_ZSTD_compress(
    dst: *mut c_void,
    dst_capacity: usize,
    src: *const c_void,
    src_size: usize,
    level: c_int,
) -> usize {
    WRAPPED_CALLS.fetch_add(1, Ordering::Relaxed);
    let compress = |cctx| zstd_sys::ZSTD_compressCCtx(cctx, dst, dst_capacity, src, src_size, level);
    with_contexts(|c| (!c.compress.is_null()).then(|| compress(c.compress))).unwrap_or_else(|| {
        let cctx = zstd_sys::ZSTD_createCCtx();
        let n = compress(cctx);
        zstd_sys::ZSTD_freeCCtx(cctx);
        n
    })
}

/// c-blosc's `ZSTD_decompress`, on this thread's decompression context.
///
/// # Safety
/// The contract of `ZSTD_decompress`: `src` holds `src_size` readable bytes and `dst` has
/// room for `dst_capacity`.
#[no_mangle]
pub unsafe extern "C" fn __wrap_ZSTD_decompress(
    dst: *mut c_void,
    dst_capacity: usize,
    src: *const c_void,
    src_size: usize,
) -> usize {
    let decompress = |dctx| zstd_sys::ZSTD_decompressDCtx(dctx, dst, dst_capacity, src, src_size);
    with_contexts(|c| (!c.decompress.is_null()).then(|| decompress(c.decompress)))
        .unwrap_or_else(|| {
            let dctx = zstd_sys::ZSTD_createDCtx();
            let n = decompress(dctx);
            zstd_sys::ZSTD_freeDCtx(dctx);
            n
        })
}
