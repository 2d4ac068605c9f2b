//! `keel-server`: the Keel command line with the server in process. `keel serve` (and `proxy`,
//! `bench`, `admin restore`) run here; it takes every other command too.

keel_cli::process_start!();

fn main() -> std::process::ExitCode {
    keel_cli::server_main()
}
