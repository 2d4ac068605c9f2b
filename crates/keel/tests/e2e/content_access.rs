//! End-to-end: content by digest (`Content`, what replicas and proxies fetch blobs with) is
//! given only to callers who may read a revision or shelved file holding it, so a user
//! denied `//depot/secret/...` cannot fetch its content by learning its digest.

use crate::common::{Client, Fixture, str_field, write};
use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;

/// The digest of `file`'s head revision, as `alice` sees it.
fn digest_of(client: &Client, file: &str) -> String {
    let records = client.json(&["fstat", file]);
    assert_eq!(records.len(), 1, "{records:?}");
    str_field(&records[0], "digest")
}

/// Calls `Content` as `user` (no ticket: the server is at security 0) and reads the reply
/// to its end: the content's stored bytes, or the refusal's message.
fn fetch(addr: &str, user: &str, digest: &str, of: Option<(&str, u32)>) -> Result<usize, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut client = KeelClient::connect(format!("http://{addr}"))
            .await
            .expect("connects");
        let (depot_file, rev) = of.map_or((String::new(), 0), |(f, r)| (f.to_string(), r));
        let request = pb::ContentRequest {
            caller: Some(pb::Caller {
                user: user.to_string(),
                workspace: String::new(),
                host: "test".into(),
                force: false,
            }),
            digest: digest.to_string(),
            depot_file,
            rev,
        };
        let mut stream = client
            .content(request)
            .await
            .map_err(|s| format!("{:?}: {}", s.code(), s.message()))?
            .into_inner();
        let mut bytes = 0;
        while let Some(m) = stream
            .message()
            .await
            .map_err(|s| format!("{:?}: {}", s.code(), s.message()))?
        {
            if let Some(pb::content_message::Body::Chunk(c)) = m.body {
                bytes += c.len();
            }
        }
        Ok(bytes)
    })
}

#[test]
fn content_by_digest_needs_read_on_a_file_holding_it() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "alice-ws");
    write(&alice.cwd, "pub/a", "public\n");
    write(&alice.cwd, "secret/s", "the secret\n");
    alice.ok(&["add", "pub/a", "secret/s"]);
    alice.ok(&["submit", "-d", "two files"]);
    // A branch of the secret file: a lazy copy, holding the same digest without owning it.
    alice.ok(&["integrate", "//depot/secret/...", "//depot/rel/..."]);
    alice.ok(&["submit", "-d", "release"]);
    let public = digest_of(&alice, "//depot/pub/a");
    let secret = digest_of(&alice, "//depot/secret/s");
    assert_eq!(digest_of(&alice, "//depot/rel/s"), secret);
    let out = alice.run_stdin(
        &["protect", "-i"],
        "Protections:\n\twrite user * * //...\n\tlist user bob * -//depot/secret/...\n\
         \tlist user carol * -//depot/secret/...\n\tlist user carol * -//depot/rel/...\n\
         \tsuper user alice * //...\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let addr = &fx.server.addr;

    // Denied the secret file (and carol its branch too): its digest is refused, by name,
    // whatever file the request names.
    for (user, of) in [
        ("bob", None),
        ("bob", Some(("//depot/pub/a", 1))),
        ("bob", Some(("//depot/secret/s", 1))),
        ("carol", Some(("//depot/rel/s", 1))),
        ("carol", None),
    ] {
        let err = fetch(addr, user, &secret, of).expect_err("refused");
        assert!(
            err.contains(&format!("content {secret} - You don't have permission"))
                && err.contains("PermissionDenied"),
            "{user} {of:?}: {err}"
        );
    }
    // Content of a file the caller may read: found through the digest, or named.
    let got = |r: Result<usize, String>| r.is_ok_and(|stored| stored > 0);
    assert!(got(fetch(addr, "bob", &public, None)));
    assert!(got(fetch(
        addr,
        "carol",
        &public,
        Some(("//depot/pub/a", 1))
    )));
    // bob may read the branch: naming it gives him the content it shares with the secret.
    assert!(got(fetch(addr, "bob", &secret, Some(("//depot/rel/s", 1)))));
    // A super user may fetch any digest.
    assert!(got(fetch(addr, "alice", &secret, None)));

    // bob still syncs what he may read.
    let bob = fx.workspace("bob", "bob-ws");
    bob.ok(&["sync"]);
    assert_eq!(
        std::fs::read_to_string(bob.cwd.join("rel/s")).expect("synced"),
        "the secret\n"
    );
    assert!(!bob.cwd.join("secret/s").exists());
}
