//! Link settings of the `keel` and `keel-server` executables that cut what every process start
//! costs, keeping them position-independent (ASLR). They are set here rather than as `rustflags`
//! in `.cargo/config.toml` because they concern these executables: rustflags would apply to every
//! crate (build scripts and proc-macro libraries included), and a library placed on the link
//! line by a flag lands after Rust's own `-lgcc_s`, too late to replace it.
//!
//! It also names the commit the binary was built from (`KEEL_COMMIT`, shown by `keel --version`):
//! `git rev-parse --short HEAD` when the source is a git checkout, `unknown` otherwise (a
//! source tarball, no git installed). A missing git never fails the build.

use std::process::Command;

/// `git ARGS` in the crate's directory, its trimmed output when it succeeded.
fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// Sets `KEEL_COMMIT` and asks cargo to run this again when HEAD moves (a commit, a checkout).
fn commit() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=KEEL_COMMIT={commit}");
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch]));
    }
    watched.push(git(&["rev-parse", "--git-path", "packed-refs"]));
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    for path in watched.into_iter().flatten() {
        let path = std::path::Path::new(&dir).join(path);
        // A path that does not exist would make cargo rerun this script at every build.
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    commit();
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
    // drops libgcc_s from the executable's dependencies. Not bundled into the library
    // (`-bundle`): the executables' link finds it where the compiler driver keeps it.
    println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    // RELR: the executable's relative relocations as a compact bitmap (`.relr.dyn`) instead of
    // one 24-byte `.rela.dyn` entry each, so the dynamic loader reads and applies kilobytes
    // rather than most of a megabyte at every start. Needs glibc 2.36 or later at run time.
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
}
