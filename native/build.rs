//! Sends c-blosc's per-block zstd calls to `blosc_zstd.rs`, which reuses one context per
//! thread instead of building one per block (GNU ld's `--wrap`, Linux only).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-cdylib=-Wl,--wrap=ZSTD_compress");
        println!("cargo:rustc-link-arg-cdylib=-Wl,--wrap=ZSTD_decompress");
    }
}
