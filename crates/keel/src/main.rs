//! `keel`: the Keel client. It answers the quick reads (`files`, `fstat`, `filelog`, `changes`,
//! `describe`, `dirs`, `opened`, `have`, `where`, `info`) itself and becomes `keel-server`,
//! installed beside it, for every other command line (`exec`).

fn main() -> std::process::ExitCode {
    keel_cli::client_main()
}

/// Linked with musl (the packaged `keel`), the process allocates with dlmalloc, which packs
/// allocations of every size into the same pages as glibc's allocator does. musl's own
/// allocator gives each size class pages of its own: a quick read touched ~60 of them, each a
/// page fault.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;
