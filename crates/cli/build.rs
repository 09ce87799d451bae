//! Release builds of `osprey` for Linux (glibc) pack their relative relocations (`DT_RELR`,
//! `-z pack-relative-relocs`): the ~90 000 `R_X86_64_RELATIVE` entries of a position-independent
//! binary this size take 2.1 MiB as `.rela.dyn`, which the dynamic loader reads at every start
//! (file size and start-up RSS), against a few KiB as a `.relr.dyn` bitmap. The binary already
//! needs glibc 2.36 (the first with `DT_RELR`) for other symbols, so it runs on no fewer
//! systems. Needs GNU ld 2.38+ or lld 15+; set `OSPREY_NO_RELR=1` to build without it.

// Cargo reads a build script's instructions from its stdout.
#![allow(clippy::print_stdout)]

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=OSPREY_NO_RELR");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    if linux_gnu && var("PROFILE") == "release" && std::env::var_os("OSPREY_NO_RELR").is_none() {
        println!("cargo:rustc-link-arg-bin=osprey=-Wl,-z,pack-relative-relocs");
    }
}
