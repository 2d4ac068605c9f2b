//! Link settings of the `keel` executable that cut what every process start costs, keeping the
//! executable position-independent (ASLR). They are set here rather than as `rustflags` in
//! `.cargo/config.toml` because they concern this one executable: rustflags would apply to every
//! crate (build scripts and proc-macro libraries included), and a library placed on the link
//! line by a flag lands after Rust's own `-lgcc_s`, too late to replace it.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    // A fully static build already links the static unwinder and has no dynamic relocations.
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|feature| feature == "crt-static");
    if !linux_gnu || crt_static {
        return;
    }
    // The unwinder (panics, backtraces) from libgcc's static archive instead of libgcc_s.so:
    // the shared library costs a load and symbol binding at every start, and its constructor
    // (`__cpu_indicator_init`) runs a dozen CPUID instructions, each a trap to the hypervisor on
    // a virtual machine. With the unwinder's symbols defined here, the linker's `--as-needed`
    // drops libgcc_s from the executable's dependencies.
    println!("cargo:rustc-link-lib=static=gcc_eh");
    // RELR: the executable's relative relocations as a compact bitmap (`.relr.dyn`) instead of
    // one 24-byte `.rela.dyn` entry each, so the dynamic loader reads and applies kilobytes
    // rather than most of a megabyte at every start. Needs glibc 2.36 or later at run time.
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
}
