//! P4 clients' job commands through P4Python (issue 30 through the issue-29 front end):
//! `jobspec -o`, `job -o/-i/-d` (P4Python's `fetch_job`/`save_job`), `jobs` with job
//! expressions, file arguments, `-l -r -m`, and `fix`/`fix -d`, tagged and untagged; refusals
//! for bad input and for users whose protections do not reach. Content is set up with the
//! native CLI.

use crate::common::write;
use crate::p4_harness::{P4Server, ok, raised};
use serde_json::{Value, json};

/// The names of the jobs in tagged `jobs` output.
fn names(result: &Value) -> Vec<String> {
    ok(result)
        .as_array()
        .expect("records")
        .iter()
        .map(|j| j["Job"].as_str().expect("Job field").to_string())
        .collect()
}

#[test]
fn jobs_job_jobspec_and_fix_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    let out = a.run_stdin(
        &["job", "-i"],
        "Job:\tnew\nDescription:\n\tBuild is slow.\n\tIt takes an hour.\n",
    );
    assert!(out.status.success(), "job -i");
    write(&root, "main.c", "int main() { return 0; }\n");
    a.ok(&["add", "main.c"]);
    a.ok(&["submit", "-d", "first"]);

    let r = s.drive(&[
        json!({"cmd": ["jobspec", "-o"]}),
        json!({"cmd": ["jobspec", "-o"], "tagged": false}),
        json!({"method": "fetch_job", "args": []}),
        json!({"method": "save_job", "args": [{
            "Job": "new", "Status": "open", "User": "alice",
            "Description": "Crash on start.\n"}]}),
        json!({"cmd": ["job", "-o", "job000002"]}),
        json!({"cmd": ["job", "-o", "job000002"], "tagged": false}),
        json!({"cmd": ["jobs", "-e", "Status=open"]}),
        json!({"cmd": ["jobs", "-e", "crash", "-m", "1"], "tagged": false}),
        json!({"cmd": ["jobs", "-r"], "tagged": false}),
        json!({"cmd": ["jobs", "-l", "-e", "job=job000001"], "tagged": false}),
        json!({"cmd": ["fix", "-c", "1", "job000002"], "tagged": false}),
        json!({"cmd": ["jobs", "-e", "status=closed"]}),
        json!({"cmd": ["jobs", "//depot/..."]}),
        json!({"cmd": ["fix", "-d", "-c", "1", "job000002"], "tagged": false}),
        json!({"cmd": ["fixes", "-j", "job000002"]}),
    ]);
    let spec = ok(&r[0])[0].clone();
    assert_eq!(spec["Fields"][0], "101 Job word 32 required", "{spec}");
    assert_eq!(spec["Values"][0], "Status open/suspended/closed", "{spec}");
    let text = ok(&r[1])[0].as_str().expect("form text").to_string();
    assert!(
        text.contains("Fields:\n\t101 Job word 32 required"),
        "{text}"
    );
    let fresh = ok(&r[2]);
    assert_eq!(fresh["Job"], "new", "{fresh}");
    assert_eq!(fresh["Status"], "open", "{fresh}");
    assert_eq!(fresh["User"], "alice", "{fresh}");
    assert!(
        r[3].to_string().contains("Job job000002 saved."),
        "{:?}",
        r[3]
    );
    let saved = ok(&r[4])[0].clone();
    assert_eq!(saved["Job"], "job000002");
    assert_eq!(saved["Description"], "Crash on start.\n");
    // The specdef made it a spec object, as P4Python's fetch_job returns.
    assert_eq!(saved["spec_class"], "Spec", "{saved}");
    let form = ok(&r[5])[0].as_str().expect("form").to_string();
    assert!(form.contains("Job:\tjob000002\n"), "{form}");
    assert!(form.contains("Status:\topen\n"), "{form}");
    assert!(form.contains("Crash on start."), "{form}");
    assert_eq!(names(&r[6]), ["job000001", "job000002"]);
    let line = ok(&r[7])[0].as_str().expect("line").to_string();
    assert!(line.starts_with("job000002 on "), "{line}");
    assert!(
        line.ends_with(" by alice *open* 'Crash on start.'"),
        "{line}"
    );
    assert_eq!(ok(&r[7]).as_array().expect("lines").len(), 1);
    let reversed = ok(&r[8]).as_array().expect("lines").clone();
    assert_eq!(reversed.len(), 2);
    assert!(
        reversed[0]
            .as_str()
            .expect("line")
            .starts_with("job000002 ")
    );
    let long = ok(&r[9])[0].as_str().expect("line").to_string();
    assert!(
        long.contains("\n\tBuild is slow.\n\tIt takes an hour."),
        "{long}"
    );
    assert_eq!(
        ok(&r[10]),
        &json!(["job000002 fixed by change 1 (closed)."])
    );
    assert_eq!(names(&r[11]), ["job000002"]);
    assert_eq!(names(&r[12]), ["job000002"]);
    assert_eq!(ok(&r[13]), &json!(["Deleted fix job000002 by change 1."]));
    assert_eq!(ok(&r[14]), &json!([]));
}

#[test]
fn job_refusals_name_what_was_wrong_and_change_nothing() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    let out = a.run_stdin(&["job", "-i"], "Job:\tnew\nDescription:\n\tFirst.\n");
    assert!(out.status.success(), "job -i");
    write(&root, "main.c", "int main() { return 0; }\n");
    a.ok(&["add", "main.c"]);
    a.ok(&["submit", "-d", "first"]);
    crate::access::protect(&a, &["super user alice * //...", "list user carol * //..."]);

    let r = s.drive(&[
        json!({"cmd": ["jobs", "-e", "status=(open"], "tagged": false}),
        json!({"cmd": ["jobs", "-e", "colour=red"], "tagged": false}),
        json!({"cmd": ["job", "-i"], "input": "Job:\tnew\nColour:\tred\nDescription:\n\tx\n"}),
        json!({"cmd": ["fix", "-s", "bogus", "-c", "1", "job000001"], "tagged": false}),
        json!({"cmd": ["fix", "job000001"], "tagged": false}),
        json!({"cmd": ["fix", "-c", "1", "job000009"], "tagged": false}),
        json!({"cmd": ["job"], "tagged": false}),
        json!({"cmd": ["jobs", "-m", "many"], "tagged": false}),
        json!({"cmd": ["fix", "-c", "1", "job000001"], "user": "carol", "client": "", "tagged": false}),
        json!({"cmd": ["job", "-i"], "input": {"Job": "new", "Description": "Sneaky.\n"}}),
        json!({"cmd": ["job", "-d", "job000001"], "tagged": false}),
        json!({"cmd": ["jobs"], "user": "alice", "client": "ws"}),
        json!({"cmd": ["fixes"]}),
        json!({"cmd": ["job", "-d", "job000001"], "tagged": false}),
        json!({"cmd": ["jobs"], "tagged": false}),
    ]);
    assert!(raised(&r[0]).contains("\"(\" at position 8"), "{:?}", r[0]);
    assert!(
        raised(&r[1]).to_lowercase().contains("colour"),
        "{:?}",
        r[1]
    );
    assert!(raised(&r[2]).contains("Colour"), "{:?}", r[2]);
    assert!(raised(&r[3]).contains("bogus"), "{:?}", r[3]);
    assert!(raised(&r[4]).contains("-c"), "{:?}", r[4]);
    assert!(raised(&r[5]).contains("job000009"), "{:?}", r[5]);
    // The job form goes to the editor, which fails (the harness's P4EDITOR is `false`).
    assert!(raised(&r[6]).contains("Execution Failed"), "{:?}", r[6]);
    assert!(raised(&r[7]).contains("many"), "{:?}", r[7]);
    for refused in &r[8..=10] {
        let text = raised(refused);
        assert!(text.contains("permission"), "{text}");
    }
    // Nothing the refusals touched changed: one job, no fixes.
    assert_eq!(names(&r[11]), ["job000001"]);
    assert_eq!(ok(&r[12]), &json!([]));
    assert_eq!(ok(&r[13]), &json!(["Job job000001 deleted."]));
    assert_eq!(ok(&r[14]), &json!([]));
}

#[test]
fn keys_and_typemap_through_p4python() {
    let s = P4Server::start();
    let a = s.server.client("alice", "", s.home.path());
    crate::access::protect(&a, &["super user alice * //...", "list user carol * //..."]);
    let r = s.drive(&[
        json!({"cmd": ["key", "build", "41"], "tagged": false}),
        json!({"cmd": ["key", "-i", "build"], "tagged": false}),
        json!({"cmd": ["key", "build"]}),
        json!({"cmd": ["key", "release", "r1"], "tagged": false}),
        json!({"cmd": ["keys"], "tagged": false}),
        json!({"cmd": ["keys", "-e", "rel*"]}),
        json!({"cmd": ["keys", "-m", "1"], "tagged": false}),
        json!({"cmd": ["key", "-d", "release"], "tagged": false}),
        json!({"cmd": ["counters"], "tagged": false}),
        json!({"method": "save_typemap", "args": [{"TypeMap": [
            "binary //depot/....png", "text+k //depot/....c"]}]}),
        json!({"method": "fetch_typemap", "args": []}),
        json!({"cmd": ["typemap", "-o"], "tagged": false}),
        json!({"cmd": ["typemap", "-i"], "input": {"TypeMap": [
            "binary //depot/....png", "nosuchtype //depot/....x"]}}),
        json!({"cmd": ["keys", "-m", "lots"], "tagged": false}),
        json!({"cmd": ["key", "-d", "-i", "build"], "tagged": false}),
        json!({"cmd": ["key", "build", "1"], "user": "carol", "tagged": false}),
        json!({"cmd": ["typemap", "-i"], "input": {"TypeMap": ["text //..."]}}),
        json!({"cmd": ["key", "build"], "tagged": false}),
        json!({"cmd": ["typemap", "-o"], "user": "alice"}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["Key build set."]));
    assert_eq!(ok(&r[1]), &json!(["42"]));
    assert_eq!(ok(&r[2]), &json!([{"key": "build", "value": "42"}]));
    assert_eq!(ok(&r[4]), &json!(["build = 42", "release = r1"]));
    assert_eq!(ok(&r[5]), &json!([{"key": "release", "value": "r1"}]));
    assert_eq!(ok(&r[6]), &json!(["build = 42"]));
    assert_eq!(ok(&r[7]), &json!(["Key release deleted."]));
    // Keys are not counters.
    let counters = ok(&r[8]).to_string();
    assert!(!counters.contains("build"), "{counters}");
    assert!(r[9].to_string().contains("Typemap saved."), "{:?}", r[9]);
    let fetched = ok(&r[10]);
    assert_eq!(
        fetched["TypeMap"],
        json!(["binary //depot/....png", "text+k //depot/....c"]),
        "{fetched}"
    );
    let form = ok(&r[11])[0].as_str().expect("form").to_string();
    assert!(
        form.contains("TypeMap:\n\tbinary //depot/....png\n"),
        "{form}"
    );
    let bad = raised(&r[12]);
    assert!(bad.contains("nosuchtype"), "{bad}");
    assert!(raised(&r[13]).contains("lots"), "{:?}", r[13]);
    assert!(raised(&r[14]).contains("-d and -i"), "{:?}", r[14]);
    assert!(raised(&r[15]).contains("permission"), "{:?}", r[15]);
    assert!(raised(&r[16]).contains("permission"), "{:?}", r[16]);
    // carol can read what she cannot change; the refused saves changed nothing.
    assert_eq!(ok(&r[17]), &json!(["42"]));
    assert_eq!(
        ok(&r[18])[0]["TypeMap"],
        json!(["binary //depot/....png", "text+k //depot/....c"])
    );
}

#[test]
fn lock_cstat_and_reviews_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "a.c", "one\n");
    write(&root, "b.c", "two\n");
    a.ok(&["add", "a.c", "b.c"]);
    a.ok(&["submit", "-d", "first"]);
    a.ok(&["edit", "a.c"]);
    let bob = s.server.client("bob", "", s.home.path());
    let form = "User: bob\nEmail: bob@example.com\nFullName: Bob R.\nReviews:\n\t//depot/a.c\n";
    assert!(bob.run_stdin(&["user", "-i"], form).status.success());
    crate::access::protect(&a, &["super user alice * //...", "list user carol * //..."]);

    let r = s.drive(&[
        json!({"cmd": ["lock", "//depot/a.c"], "client": "ws", "tagged": false}),
        json!({"cmd": ["lock"]}),
        json!({"cmd": ["unlock"], "tagged": false}),
        json!({"cmd": ["unlock", "//depot/b.c"], "tagged": false}),
        json!({"cmd": ["lock", "-c", "abc"], "tagged": false}),
        json!({"cmd": ["cstat", "//depot/..."]}),
        json!({"cmd": ["review"], "tagged": false}),
        json!({"cmd": ["review", "-c", "2"]}),
        json!({"cmd": ["reviews", "//depot/a.c"], "tagged": false}),
        json!({"cmd": ["reviews", "-c", "1"]}),
        json!({"cmd": ["review", "-c", "x"], "tagged": false}),
        json!({"cmd": ["lock", "//depot/a.c"], "user": "carol", "client": "", "tagged": false}),
        json!({"cmd": ["unlock", "-f", "//depot/a.c"], "tagged": false}),
        json!({"cmd": ["opened"], "user": "alice", "client": "ws"}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["//depot/a.c#1 - locked"]));
    assert_eq!(
        ok(&r[1]),
        &json!([{"depotFile": "//depot/a.c", "rev": "1", "action": "locked"}])
    );
    assert_eq!(ok(&r[2]), &json!(["//depot/a.c#1 - unlocked"]));
    assert!(
        raised(&r[3]).contains("//depot/b.c - file(s) not opened"),
        "{:?}",
        r[3]
    );
    assert!(raised(&r[4]).contains("-c abc"), "{:?}", r[4]);
    assert_eq!(ok(&r[5]), &json!([{"change": "1", "status": "have"}]));
    let line = ok(&r[6])[0].as_str().expect("line").to_string();
    assert!(line.starts_with("Change 1 alice "), "{line}");
    assert_eq!(ok(&r[7]), &json!([]));
    assert_eq!(ok(&r[8]), &json!(["bob <bob@example.com> (Bob R.)"]));
    assert_eq!(ok(&r[9])[0]["user"], "bob");
    assert!(raised(&r[10]).contains("-c x"), "{:?}", r[10]);
    // carol (list access) may neither lock nor force an unlock; the file stays unlocked.
    assert!(raised(&r[11]).contains("permission"), "{:?}", r[11]);
    assert!(raised(&r[12]).contains("permission"), "{:?}", r[12]);
    let opened = &ok(&r[13])[0];
    assert_eq!(opened["depotFile"], "//depot/a.c");
    assert!(opened.get("ourLock").is_none(), "{opened}");
}

#[test]
fn interchanges_through_p4python() {
    let s = P4Server::start();
    let (a, root) = s.native_workspace();
    write(&root, "main/a.c", "one\n");
    a.ok(&["add", "main/a.c"]);
    a.ok(&["submit", "-d", "first"]); // 1
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch rel"]); // 2
    a.ok(&["edit", "main/a.c"]);
    write(&root, "main/a.c", "two\n");
    a.ok(&["submit", "-d", "fix a\nwith a second line"]); // 3
    crate::access::protect(
        &a,
        &[
            "super user alice * //...",
            "list user carol * //depot/rel/...",
        ],
    );

    let r = s.drive(&[
        json!({"cmd": ["interchanges", "//depot/main/...", "//depot/rel/..."], "client": "ws"}),
        json!({"cmd": ["interchanges", "//depot/main/...", "//depot/rel/..."], "tagged": false}),
        json!({"cmd": ["interchanges", "-l", "-f", "//depot/main/...", "//depot/rel/..."],
               "tagged": false}),
        json!({"cmd": ["interchanges", "-f", "//depot/main/...", "//depot/rel/..."]}),
        json!({"cmd": ["interchanges", "//depot/rel/...", "//depot/main/..."]}),
        json!({"cmd": ["interchanges", "//depot/main/..."], "tagged": false}),
        json!({"cmd": ["interchanges", "-b", "nosuch"], "tagged": false}),
        json!({"cmd": ["interchanges", "//depot/main/...", "//depot/rel/..."],
               "user": "carol", "client": ""}),
    ]);
    let found = ok(&r[0]).as_array().expect("records").clone();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["change"], "3");
    assert_eq!(found[0]["user"], "alice");
    assert_eq!(found[0]["client"], "ws");
    let line = ok(&r[1])[0].as_str().expect("line").to_string();
    assert!(line.starts_with("Change 3 on "), "{line}");
    assert!(
        line.ends_with(" by alice@ws 'fix a with a second line'"),
        "{line}"
    );
    let long = ok(&r[2])[0].as_str().expect("line").to_string();
    assert!(long.contains("\n\tfix a\n\twith a second line\n"), "{long}");
    assert!(long.ends_with("\n//depot/main/a.c#2"), "{long}");
    // P4Python gathers depotFile0.. and rev0.. into lists.
    assert_eq!(ok(&r[3])[0]["depotFile"], json!(["//depot/main/a.c"]));
    assert_eq!(ok(&r[3])[0]["rev"], json!(["2"]));
    // The other way: nothing; rel's branching change is main's own content.
    let back: Vec<&Value> = ok(&r[4]).as_array().expect("records").iter().collect();
    assert!(back.is_empty(), "{back:?}");
    assert!(raised(&r[5]).contains("Usage: interchanges"), "{:?}", r[5]);
    assert!(raised(&r[6]).contains("nosuch"), "{:?}", r[6]);
    // carol may not list the source: she sees no change of it.
    assert_eq!(ok(&r[7]), &json!([]));
}

#[test]
fn jobspec_and_spec_change_the_job_fields_through_p4python() {
    let s = P4Server::start();
    let (a, _root) = s.native_workspace();
    crate::access::protect(
        &a,
        &["super user alice * //...", "write user carol * //..."],
    );
    let mut spec = s.drive(&[json!({"cmd": ["jobspec", "-o"]})]);
    let mut form = ok(&spec[0])[0].clone();
    let fields = form["Fields"].as_array_mut().expect("Fields");
    fields.push(json!("106 Severity select 10 optional"));
    form["Values"]
        .as_array_mut()
        .expect("Values")
        .push(json!("Severity A/B/C"));
    form["Presets"]
        .as_array_mut()
        .expect("Presets")
        .push(json!("Severity B"));
    let form = {
        let mut f = form.as_object().expect("form").clone();
        f.retain(|k, _| matches!(k.as_str(), "Fields" | "Values" | "Presets" | "Comments"));
        Value::Object(f)
    };
    let mut bad = form.clone();
    bad["Fields"]
        .as_array_mut()
        .expect("Fields")
        .push(json!("107 Colour colour 10 optional"));
    let r = s.drive(&[
        json!({"cmd": ["jobspec", "-i"], "input": form}),
        json!({"cmd": ["job", "-o"]}),
        json!({"cmd": ["spec", "-o", "job"], "tagged": false}),
        json!({"cmd": ["jobspec", "-i"], "input": bad}),
        json!({"cmd": ["spec", "-o", "client"], "tagged": false}),
        json!({"cmd": ["jobspec", "-i"], "input": form, "user": "carol", "client": ""}),
        json!({"cmd": ["jobspec"], "tagged": false, "user": "alice", "client": "ws"}),
    ]);
    assert_eq!(ok(&r[0]), &json!(["Spec job saved."]), "{}", r[0]);
    // A new job starts with the new field's preset.
    assert_eq!(ok(&r[1])[0]["Severity"], "B", "{}", r[1]);
    let text = ok(&r[2])[0].as_str().expect("form text").to_string();
    assert!(text.contains("\t106 Severity select 10 optional"), "{text}");
    // A field type the spec does not know is refused, naming the line; nothing changes.
    let err = raised(&r[3]);
    assert!(err.contains("colour"), "{err}");
    assert!(raised(&r[4]).contains("client"), "{:?}", r[4]);
    assert!(raised(&r[5]).contains("permission"), "{:?}", r[5]);
    // The editor round trip (the harness's P4EDITOR fails): nothing saved.
    assert!(raised(&r[6]).contains("Execution Failed"), "{:?}", r[6]);
    spec = s.drive(&[json!({"cmd": ["jobspec", "-o"]})]);
    let now = ok(&spec[0])[0]["Fields"]
        .as_array()
        .expect("Fields")
        .clone();
    assert_eq!(now.len(), 6, "{now:?}");
    assert_eq!(now[5], "106 Severity select 10 optional");
}
