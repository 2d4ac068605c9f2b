//! The end-to-end suite: every module starts the real `keel serve` on loopback and drives it
//! through the real `keel` CLI, as a user would. One test binary, one module per area.
//!
//! Slow cases (a 1 GiB file, a 70,000-file branch, kill -9 rounds, benchmark smoke runs) run
//! only when `KEEL_SLOW_TESTS=1`; `scripts/test.sh` (and so CI) sets it.

mod common;
mod raw_rpc;

mod access;
mod access_auth;
mod access_rpcs;
mod annotate;
mod audit;
mod auth;
mod auth_every_rpc;
mod backup;
mod bench;
mod branch_70k;
mod branching;
mod changes_since;
mod clean;
mod commands;
mod config;
mod configuration_page;
mod content_access;
mod content_store;
mod counters;
mod crash;
mod faults;
mod first_minutes;
mod huge_pages;
mod ignore_files;
mod incremental_sync;
mod interrupted_sync;
mod jobs;
mod keywords;
mod labels;
mod large_file;
mod local_state;
mod locks;
mod log_report;
mod metrics;
mod monitor;
mod obliterate;
mod p4_auth;
mod p4_gate;
mod p4_harness;
mod p4_session;
mod p4_specs;
mod proxy;
mod purged_types;
mod replica;
mod replica_content;
mod replica_fetch;
mod replica_opened;
mod replica_seed;
mod script_glue;
mod security_files;
mod security_limits;
mod security_login;
mod security_privileges;
mod security_stop;
mod security_triggers;
mod security_workspaces;
mod shelves;
mod sync_and_locks;
mod tls;
mod transcripts;
mod triggers;
mod type_changes;
mod typemap;
mod undo;
mod verify;
mod watch;
mod webhooks;
mod workflow;
mod workspace_clone;
