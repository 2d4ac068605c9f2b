//! The same link settings as the `keel` executable's (crates/keel/build.rs): the static
//! unwinder instead of libgcc_s, and RELR relocations; with `FLOOR_NO_PIE` set, linked
//! position-dependent (`-no-pie` after rustc's `-pie`).

fn main() {
    println!("cargo:rerun-if-env-changed=FLOOR_NO_PIE");
    println!("cargo:rustc-link-lib=static=gcc_eh");
    println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    if std::env::var_os("FLOOR_NO_PIE").is_some() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
