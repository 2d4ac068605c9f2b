//! End-to-end: `unlock -x` releases what a deleted user left holding: a lock (no one else
//! can submit the file) and an exclusive `+l` open (no one else can open it). Admins only;
//! the holds of users who still exist are left alone.

use crate::access::protect;
use crate::common::{Fixture, write};

#[test]
fn unlock_x_releases_the_holds_of_deleted_users() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "art/hero.psd", "pixels");
    write(&a.cwd, "src/main.c", "int x;\n");
    a.ok(&["add", "-t", "binary+l", "art/hero.psd"]);
    a.ok(&["add", "src/main.c"]);
    a.ok(&["submit", "-d", "art and code"]);
    let dave = fx.workspace("dave", "d");
    dave.ok(&["sync"]);
    dave.ok(&["edit", "art/hero.psd", "src/main.c"]);
    dave.ok(&["lock", "src/main.c"]);
    let bob = fx.workspace("bob", "b");
    bob.ok(&["sync"]);
    protect(&a, &["write user * * //...", "super user alice * //..."]);

    // Dave still exists: nothing of his is orphaned.
    let out = a.ok(&["unlock", "-x"]);
    assert!(out.is_empty(), "{out}");

    // Dave's user is deleted; his exclusive open and his lock still hold.
    a.ok(&["user", "-d", "-f", "dave"]);
    let err = bob.fail(&["edit", "art/hero.psd"]);
    assert!(err.contains("exclusive open"), "{err}");
    bob.ok(&["edit", "src/main.c"]);
    write(&bob.cwd, "src/main.c", "int y;\n");
    let err = bob.fail(&["submit", "-d", "blocked"]);
    assert!(err.contains("locked by dave@d"), "{err}");

    // Bob is no admin: refused, and nothing changes.
    let err = bob.fail(&["unlock", "-x"]);
    assert!(err.contains("//depot/"), "{err}");
    let err = bob.fail(&["submit", "-d", "still blocked"]);
    assert!(err.contains("locked by dave@d"), "{err}");

    let out = a.ok(&["unlock", "-x", "//depot/..."]);
    assert!(out.contains("//depot/art/hero.psd"), "{out}");
    assert!(out.contains("//depot/src/main.c"), "{out}");
    bob.ok(&["submit", "-d", "unblocked"]);
    bob.ok(&["edit", "art/hero.psd"]);
    let err = a.fail(&["unlock", "-x", "-f", "//depot/..."]);
    assert!(err.contains("-x") || err.contains("-f"), "{err}");
}
