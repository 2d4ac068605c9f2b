//! File content between the server and the client's workspace: files written to the client
//! ([`to_client`]) for sync, print to a file, revert and unshelve.

pub mod to_client;
