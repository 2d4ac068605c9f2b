//! `keel`: the Keel client. `keel serve`, `keel proxy`, `keel bench` and `keel admin restore`
//! run in `keel-server`, installed beside it, which this process becomes (`exec`).

keel_cli::process_start!();

fn main() -> std::process::ExitCode {
    keel_cli::client_main()
}
