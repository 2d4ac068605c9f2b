//! Generates the gRPC types with the protoc shipped in `protoc-bin-vendored`, so a fresh machine
//! needs no system protobuf compiler.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: build scripts are single-threaded; nothing else reads the environment concurrently.
    unsafe { std::env::set_var("PROTOC", protoc) };
    tonic_prost_build::configure().compile_protos(&["proto/keel.proto"], &["proto"])?;
    println!("cargo:rerun-if-changed=proto/keel.proto");
    Ok(())
}
