//! `keel`: the Keel client. It answers the quick reads (`files`, `fstat`, `filelog`, `changes`,
//! `describe`, `dirs`, `opened`, `have`, `where`, `info`) itself and becomes `keel-server`,
//! installed beside it, for every other command line (`exec`).

fn main() -> std::process::ExitCode {
    keel_cli::client_main()
}
