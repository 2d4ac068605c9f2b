//! The least a `keel fstat FILE` process could do on Keel's stack (tokio, tonic, the generated
//! client): connect to `KEEL_SERVER`, make the one call, print each record's file and revision.
//! No command line parsing, settings, allocator tuning or error reporting.

use keel_proto::v1::keel_client::KeelClient;
use keel_proto::v1::{Caller, FilesRequest};

fn main() {
    let addr = std::env::var("KEEL_SERVER").expect("KEEL_SERVER");
    let files: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .expect("address")
            .connect()
            .await
            .expect("connect");
        let request = FilesRequest {
            caller: Some(Caller {
                user: std::env::var("KEEL_USER").unwrap_or_default(),
                ..Default::default()
            }),
            files,
            ..Default::default()
        };
        let mut records = KeelClient::new(channel)
            .fstat(request)
            .await
            .expect("fstat")
            .into_inner();
        let mut out = String::new();
        while let Some(r) = records.message().await.expect("record") {
            out.push_str(&format!("{}#{}\n", r.depot_file, r.head_rev));
        }
        print!("{out}");
    });
}
