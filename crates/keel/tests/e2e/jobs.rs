//! End-to-end: jobs through the real CLI and server. The job spec (`jobspec -o/-i`, `spec`)
//! with a custom field and bad forms refused naming the line; jobs created (`Job: new`
//! numbers them), shown with their dates, searched with `jobs -e` (fields, bare words, `|`,
//! `^`, wildcards, dates) and a bad expression refused naming the token; fixes linking jobs
//! to changes, submit closing them, `describe` and `fixes` showing them; and the protections
//! each command needs.

use crate::access::protect;
use crate::common::{Client, Fixture, Server, str_field, write};
use crate::replica::{replica_client, wait_for};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Saves a job from form `fields` (`job -i`); returns the name the server gave it.
fn new_job(client: &Client, fields: &str) -> String {
    let out = client.run_stdin(&["job", "-i"], &format!("Job:\tnew\n{fields}"));
    assert!(out.status.success(), "job -i failed: {}", stderr(&out));
    let text = stdout(&out);
    text.trim()
        .strip_prefix("Job ")
        .and_then(|t| t.strip_suffix(" saved."))
        .unwrap_or_else(|| panic!("unexpected job -i output: {text}"))
        .to_string()
}

/// The names `jobs -e EXPR` lists, in order.
fn search(client: &Client, expr: &str) -> Vec<String> {
    client
        .json(&["jobs", "-e", expr])
        .iter()
        .map(|j| str_field(j, "Job"))
        .collect()
}

fn status_of(client: &Client, job: &str) -> String {
    str_field(&client.json(&["job", "-o", job])[0], "Status")
}

#[test]
fn the_job_spec_takes_custom_fields_and_refuses_bad_lines_naming_them() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "ws");
    let spec = alice.ok(&["jobspec", "-o"]);
    for line in [
        "\t101 Job word 32 required",
        "\t102 Status select 10 required",
        "\tStatus open/suspended/closed",
        "\tDescription $blank",
    ] {
        assert!(spec.contains(line), "{line} in\n{spec}");
    }
    assert_eq!(alice.ok(&["spec", "-o", "job"]), spec);
    let err = alice.fail(&["spec", "-o", "client"]);
    assert!(err.contains("spec type \"client\""), "{err}");

    // A bad line is refused naming it, and the spec stays as it was.
    let bad = spec.replace(
        "\t105 Description text 0 required",
        "\t105 Description blob 0 required",
    );
    let out = alice.run_stdin(&["jobspec", "-i"], &bad);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("105 Description blob 0 required") && err.contains("unknown type \"blob\""),
        "{err}"
    );
    let line_no = bad
        .lines()
        .position(|l| l.contains("Description blob"))
        .map(|i| i + 1)
        .expect("line");
    assert!(err.contains(&format!("job spec line {line_no}")), "{err}");
    assert_eq!(alice.ok(&["jobspec", "-o"]), spec);

    // A custom select field, with its values and preset.
    let custom = spec
        .replace(
            "\t105 Description text 0 required\n",
            "\t105 Description text 0 required\n\t106 Severity select 10 default\n",
        )
        .replace(
            "\tStatus open/suspended/closed\n",
            "\tStatus open/suspended/closed\n\tSeverity A/B/C\n",
        )
        .replace(
            "\tDescription $blank\n",
            "\tDescription $blank\n\tSeverity C\n",
        );
    let out = alice.run_stdin(&["jobspec", "-i"], &custom);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Job spec saved.");
    let shown = alice.ok(&["jobspec", "-o"]);
    assert!(
        shown.contains("\t106 Severity select 10 default"),
        "{shown}"
    );
    let fresh = alice.ok(&["job", "-o"]);
    assert!(fresh.contains("Severity:\tC"), "{fresh}");
    let job = new_job(&alice, "Severity:\tA\nDescription:\n\tThe GUI hangs.\n");
    assert_eq!(job, "job000001");
    assert_eq!(search(&alice, "severity=a"), ["job000001"]);
    let out = alice.run_stdin(
        &["job", "-i"],
        "Job:\tnew\nSeverity:\tZ\nDescription:\n\tx\n",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("field Severity: \"Z\" is not one of A/B/C"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn jobs_are_saved_shown_searched_and_deleted() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "ws");
    let bob = fx.workspace("bob", "bws");
    let first = new_job(
        &alice,
        "Description:\n\tCrash on start-up when the GUI opens.\n",
    );
    let second = new_job(
        &bob,
        "Status:\tsuspended\nDescription:\n\tSlow sync of big trees.\n",
    );
    let named = alice.run_stdin(
        &["job", "-i"],
        "Job:\tbuild-break\nUser:\tcarol\nDescription:\n\tThe nightly build crashes.\n",
    );
    assert!(named.status.success(), "{}", stderr(&named));
    assert_eq!(
        (first.as_str(), second.as_str()),
        ("job000001", "job000002")
    );

    // job -o: the form with its dates, and the values the presets gave.
    let form = alice.ok(&["job", "-o", &first]);
    for want in [
        "Job:\tjob000001",
        "Update:\t",
        "Access:\t",
        "Status:\topen",
        "User:\talice",
    ] {
        assert!(form.contains(want), "{want} in\n{form}");
    }
    let record = &alice.json(&["job", "-o", &second])[0];
    assert_eq!(str_field(record, "User"), "bob");
    assert_eq!(str_field(record, "Status"), "suspended");
    // The form -o prints goes back through -i; an edit is kept.
    let edited = form.replace("Status:\topen", "Status:\tsuspended");
    let out = alice.run_stdin(&["job", "-i"], &edited);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(status_of(&alice, &first), "suspended");
    alice.run_stdin(&["job", "-i"], &form);
    assert_eq!(status_of(&alice, &first), "open");

    // Listing and searching.
    let all = alice.ok(&["jobs"]);
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines.len(), 3, "{all}");
    assert!(
        lines[1].starts_with("job000001 on ")
            && lines[1].ends_with(" by alice *open* 'Crash on start-up when the GUI opens.'"),
        "{all}"
    );
    let cases: &[(&str, &[&str])] = &[
        ("status=open", &["build-break", "job000001"]),
        ("Status=SUSPENDED", &["job000002"]),
        ("gui", &["job000001"]),
        ("crash*", &["build-break", "job000001"]),
        ("crash* & user=carol", &["build-break"]),
        ("crash* ^user=carol", &["job000001"]),
        ("sync | gui", &["job000001", "job000002"]),
        ("(slow|nightly) status=open", &["build-break"]),
        ("^status=open", &["job000002"]),
        ("user>b", &["build-break", "job000002"]),
        ("\"start-up\"", &["job000001"]),
        (
            "date>2000/01/01",
            &["build-break", "job000001", "job000002"],
        ),
        ("date<2000/01/01", &[]),
        ("nothing-here", &[]),
    ];
    for (expr, want) in cases {
        assert_eq!(search(&alice, expr), *want, "jobs -e {expr}");
    }
    let today = str_field(&alice.json(&["job", "-o", &first])[0], "Date");
    let day = today.split(' ').next().expect("day").to_string();
    assert_eq!(search(&alice, &format!("date={day}")).len(), 3);
    let newest: Vec<String> = alice
        .json(&["jobs", "-r", "-m", "2"])
        .iter()
        .map(|j| str_field(j, "Job"))
        .collect();
    assert_eq!(newest, ["job000002", "job000001"]);
    let long = alice.ok(&["jobs", "-l", "-e", "job=build-break"]);
    assert!(long.contains("\n\tThe nightly build crashes.\n"), "{long}");

    // A bad expression is refused naming the token and where it is.
    let err = alice.fail(&["jobs", "-e", "status=open & (gui"]);
    assert!(
        err.contains("missing ')' for the '(' at position 15"),
        "{err}"
    );
    let err = alice.fail(&["jobs", "-e", "status=open )"]);
    assert!(err.contains("unexpected \")\" at position 13"), "{err}");
    let err = alice.fail(&["jobs", "-e", "colour=red"]);
    assert!(
        err.contains("unknown field \"colour\" at position 1"),
        "{err}"
    );

    // Bad job forms are refused naming the field; nothing is saved.
    let out = alice.run_stdin(
        &["job", "-i"],
        "Job:\tnew\nStatus:\tshut\nDescription:\n\tx\n",
    );
    assert!(stderr(&out).contains("field Status: \"shut\" is not one of open/suspended/closed"));
    let out = alice.run_stdin(&["job", "-i"], "Job:\tnew\nColour:\tred\n");
    assert!(stderr(&out).contains("Colour"), "{}", stderr(&out));
    let out = alice.run_stdin(&["job", "-i"], "Job:\tnew\n");
    assert!(
        stderr(&out).contains("field Description: a value is required"),
        "{}",
        stderr(&out)
    );
    assert_eq!(alice.json(&["jobs"]).len(), 3);

    // Read-only fields: Date is set by the server unless an administrator forces it.
    let current = alice.ok(&["job", "-o", &first]);
    let date = str_field(&alice.json(&["job", "-o", &first])[0], "Date");
    let forced = current.replace(&format!("Date:\t{date}"), "Date:\t2001/02/03 04:05:06");
    assert_ne!(forced, current);
    alice.run_stdin(&["job", "-i"], &forced);
    assert_ne!(
        str_field(&alice.json(&["job", "-o", &first])[0], "Date"),
        "2001/02/03 04:05:06"
    );
    let out = alice.run_stdin(&["job", "-i", "-f"], &forced);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        str_field(&alice.json(&["job", "-o", &first])[0], "Date"),
        "2001/02/03 04:05:06"
    );
    assert_eq!(search(&alice, "date<2002/01/01"), ["job000001"]);

    alice.ok(&["job", "-d", "build-break"]);
    assert_eq!(search(&alice, "crash*"), ["job000001"]);
    let err = alice.fail(&["job", "-d", "build-break"]);
    assert!(err.contains("job 'build-break' does not exist"), "{err}");
}

#[test]
fn fixes_link_jobs_to_changes_and_submit_closes_them() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let crash = new_job(&a, "Description:\n\tCrash on start.\n");
    let slow = new_job(&a, "Description:\n\tSlow start.\n");
    let late = new_job(&a, "Description:\n\tFixed later.\n");
    a.ok(&["change", "-d", "fix the crash"]);
    write(&a.cwd, "src/main.c", "int main() { return 0; }\n");
    a.ok(&["add", "-c", "1", "src/main.c"]);
    let out = a.ok(&["fix", "-c", "1", &crash]);
    assert_eq!(out.trim(), "Job job000001 fixed by change 1 (closed).");
    a.ok(&["fix", "-c", "1", "-s", "suspended", &slow]);
    // Pending: the jobs keep their status until the change is submitted.
    assert_eq!(status_of(&a, &crash), "open");
    let fixes = a.json(&["fixes", "-c", "1"]);
    assert_eq!(fixes.len(), 2);
    assert_eq!(str_field(&fixes[0], "Job"), "job000001");
    assert_eq!(str_field(&fixes[0], "Status"), "closed");

    a.ok(&["submit", "-c", "1"]);
    assert_eq!(status_of(&a, &crash), "closed");
    assert_eq!(status_of(&a, &slow), "suspended");
    assert_eq!(status_of(&a, &late), "open");
    let described = a.ok(&["describe", "-s", "1"]);
    assert!(described.contains("Jobs fixed ..."), "{described}");
    assert!(described.contains("job000001 on "), "{described}");
    assert!(
        described.contains("by alice *closed*\n\n\tCrash on start."),
        "{described}"
    );
    let record = &a.json(&["describe", "-s", "1"])[0];
    assert_eq!(str_field(record, "job0"), "job000001");
    assert_eq!(str_field(record, "jobstat1"), "suspended");

    // Jobs and fixes by the files their changes touched.
    let by_file: Vec<String> = a
        .json(&["jobs", "//depot/src/..."])
        .iter()
        .map(|j| str_field(j, "Job"))
        .collect();
    assert_eq!(by_file, ["job000001", "job000002"]);
    assert!(a.json(&["jobs", "//depot/elsewhere/..."]).is_empty());
    assert_eq!(a.json(&["fixes", "//depot/src/main.c"]).len(), 2);
    assert_eq!(a.json(&["fixes", "-j", &slow]).len(), 1);

    // A fix of a submitted change sets the status at once.
    a.ok(&["fix", "-c", "1", &late]);
    assert_eq!(status_of(&a, &late), "closed");
    let line = a.ok(&["fixes", "-j", &late]);
    assert!(
        line.starts_with("job000003 fixed by change 1 on ")
            && line.contains("by alice@ws (closed)"),
        "{line}"
    );

    // A job a change fixes cannot be deleted until the fix is removed.
    let err = a.fail(&["job", "-d", &late]);
    assert!(
        err.contains("job 'job000003' is fixed by change 1"),
        "{err}"
    );
    a.ok(&["fix", "-d", "-c", "1", &late]);
    assert!(a.json(&["fixes", "-j", &late]).is_empty());
    a.ok(&["job", "-d", &late]);

    // Refusals name what is wrong and change nothing.
    let err = a.fail(&["fix", "-c", "99", &crash]);
    assert!(err.contains("change 99 does not exist"), "{err}");
    let err = a.fail(&["fix", "-c", "1", "nosuchjob"]);
    assert!(err.contains("job 'nosuchjob' does not exist"), "{err}");
    let err = a.fail(&["fix", "-c", "1", "-s", "done", &crash]);
    assert!(
        err.contains("\"done\" is not a job status (one of open/suspended/closed)"),
        "{err}"
    );
    let unfixed = new_job(&a, "Description:\n\tNever fixed.\n");
    let err = a.fail(&["fix", "-d", "-c", "1", &unfixed]);
    assert!(
        err.contains("job 'job000004' is not fixed by change 1"),
        "{err}"
    );
    assert_eq!(a.json(&["fixes"]).len(), 2);
}

#[test]
fn jobs_i_follows_integrations_back_to_the_fixing_change() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let job = new_job(&a, "Description:\n\tFixed on main.\n");
    a.ok(&["change", "-d", "fix on main"]);
    write(&a.cwd, "main/a.c", "fixed\n");
    a.ok(&["add", "-c", "1", "main/a.c"]);
    a.ok(&["fix", "-c", "1", &job]);
    a.ok(&["submit", "-c", "1"]);
    a.ok(&["integrate", "//depot/main/...", "//depot/rel/..."]);
    a.ok(&["submit", "-d", "branch to rel"]);
    let names = |args: &[&str]| -> Vec<String> {
        a.json(args).iter().map(|j| str_field(j, "Job")).collect()
    };
    assert!(names(&["jobs", "//depot/rel/..."]).is_empty());
    assert_eq!(names(&["jobs", "-i", "//depot/rel/..."]), [job.as_str()]);
    assert_eq!(names(&["jobs", "-i", "//depot/main/..."]), [job.as_str()]);
    let err = a.fail(&["jobs", "-i"]);
    assert!(err.contains("FILE"), "{err}");
}

#[test]
fn the_change_form_jobs_field_fixes_them_and_submit_closes_them() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let job = new_job(&a, "Description:\n\tFrom the form.\n");
    write(&a.cwd, "f.txt", "x\n");
    a.ok(&["add", "f.txt"]);
    let editor = fx.dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i -e 's/<enter description here>/Form submit/' \
         -e 's/^Jobs:.*/Jobs:\\n\\tjob000001/' \"$1\"\n",
    )
    .expect("editor script");
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = a.run_with(
        &["submit"],
        &[("EDITOR", editor.to_str().expect("utf-8"))],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Job job000001 fixed by change 1."),
        "{}",
        stdout(&out)
    );
    assert_eq!(status_of(&a, &job), "closed");
    assert_eq!(str_field(&a.json(&["fixes", "-j", &job])[0], "Change"), "1");
}

#[test]
fn job_commands_need_their_protections() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "ws");
    let bob = fx.workspace("bob", "bws");
    let carol = fx.server.client("carol", "", &fx.dir.path().join("ws"));
    let job = new_job(&alice, "Description:\n\tProtected.\n");
    alice.ok(&["change", "-d", "a change"]);
    protect(
        &alice,
        &["list user bob * //...", "super user alice * //..."],
    );
    // bob may list: jobs, job -o, jobspec -o, fixes; not save, fix or change the spec.
    assert_eq!(search(&bob, "protected"), [job.as_str()]);
    bob.ok(&["job", "-o", &job]);
    let spec = bob.ok(&["jobspec", "-o"]);
    bob.ok(&["fixes"]);
    let out = bob.run_stdin(&["job", "-i"], "Job:\tnew\nDescription:\n\tx\n");
    assert!(
        stderr(&out).contains("SaveJob needs open access"),
        "{}",
        stderr(&out)
    );
    let err = bob.fail(&["fix", "-c", "1", &job]);
    assert!(err.contains("Fix needs open access"), "{err}");
    let err = bob.fail(&["job", "-d", &job]);
    assert!(err.contains("DeleteJob needs open access"), "{err}");
    let out = bob.run_stdin(&["jobspec", "-i"], &spec);
    assert!(
        stderr(&out).contains("SaveJobSpec needs super access"),
        "{}",
        stderr(&out)
    );
    // -f needs admin: alice (super) may, an open-level user may not.
    protect(
        &alice,
        &["open user bob * //...", "super user alice * //..."],
    );
    let form = bob.ok(&["job", "-o", &job]);
    let out = bob.run_stdin(&["job", "-i", "-f"], &form);
    assert!(
        stderr(&out).contains("forcing read-only fields needs admin access"),
        "{}",
        stderr(&out)
    );
    // carol has no line at all: not even the list.
    let err = carol.fail(&["jobs"]);
    assert!(err.contains("needs list access"), "{err}");
    assert_eq!(alice.json(&["jobs"]).len(), 1);
}

#[test]
fn a_replica_follows_jobs_and_fixes_and_refuses_to_change_them() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "ws");
    let replica = Server::start_replica(&fx.dir.path().join("replica"), &fx.server.addr, &[])
        .expect("replica starts");
    let ra = replica_client(&replica, &a);
    let job = new_job(&a, "Description:\n\tSeen on the replica.\n");
    a.ok(&["change", "-d", "a change"]);
    a.ok(&["fix", "-c", "1", &job]);
    wait_for(
        "the replica has the fix",
        Duration::from_secs(30),
        || match ra.json(&["fixes", "-j", &job]).len() {
            1 => Ok(()),
            n => Err(format!("{n} fixes on the replica")),
        },
    );
    // Searched through the replica's own copy of the index.
    assert_eq!(search(&ra, "replica status=open"), [job.as_str()]);
    assert_eq!(ra.ok(&["jobspec", "-o"]), a.ok(&["jobspec", "-o"]));
    let out = ra.run_stdin(&["job", "-i"], "Job:\tnew\nDescription:\n\tx\n");
    assert!(
        stderr(&out).contains("read-only replica"),
        "{}",
        stderr(&out)
    );
    let err = ra.fail(&["fix", "-d", "-c", "1", &job]);
    assert!(err.contains("read-only replica"), "{err}");
    assert_eq!(a.json(&["jobs"]).len(), 1);
}

/// A search reads the index entries of its terms and the jobs they name, not every job: under
/// a MaxScanRows limit far below the number of jobs, a narrow search still answers while a
/// listing of every job is stopped.
#[test]
fn a_search_reads_the_index_not_every_job() {
    let fx = Fixture::new();
    let alice = fx.workspace("alice", "ws");
    let bob = fx.workspace("bob", "bws");
    for i in 0..48 {
        new_job(&alice, &format!("Description:\n\tRoutine chore {i}.\n"));
    }
    let needle = new_job(&alice, "Description:\n\tThe one needle.\n");
    let out = alice.run_stdin(
        &["group", "-i", "small"],
        "Group:\tsmall\nMaxScanRows:\t30\nUsers:\n\tbob\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(search(&bob, "needle"), [needle.as_str()]);
    assert_eq!(
        search(&bob, "job=job000003 | needl*"),
        ["job000003", needle.as_str()]
    );
    let err = bob.fail(&["jobs"]);
    assert!(err.contains("Too many rows scanned (over 30)"), "{err}");
    let err = bob.fail(&["jobs", "-e", "chore"]);
    assert!(err.contains("Too many rows scanned (over 30)"), "{err}");
    assert_eq!(alice.json(&["jobs", "-e", "chore status=open"]).len(), 48);
}
