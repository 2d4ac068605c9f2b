//! End-to-end: `annotate -dl`, `-db` and `-dw` match lines ignoring line endings, the amount
//! of whitespace, or all whitespace, and show the annotated revision's own text.

use crate::common::{Fixture, write};

#[test]
fn annotate_ignores_whitespace_as_asked() {
    let fx = Fixture::new();
    let a = fx.workspace("alice", "a");
    write(&a.cwd, "f.txt", "a b\nx y\nend\n");
    a.ok(&["add", "f.txt"]);
    a.ok(&["submit", "-d", "one"]);
    for content in ["a b\nx   y\nend\r\n", "ab\nx   y\nend\r\n"] {
        a.ok(&["edit", "f.txt"]);
        write(&a.cwd, "f.txt", content);
        a.ok(&["submit", "-d", "next"]);
    }
    let shown = |flag: Option<&str>| {
        let mut args = vec!["annotate", "-q"];
        args.extend(flag);
        args.push("//depot/f.txt");
        a.ok(&args)
    };
    assert_eq!(shown(None), "3: ab\n2: x   y\n2: end\r\n");
    assert_eq!(shown(Some("-dl")), "3: ab\n2: x   y\n1: end\r\n");
    assert_eq!(shown(Some("-db")), "3: ab\n1: x   y\n1: end\r\n");
    assert_eq!(shown(Some("-dw")), "1: ab\n1: x   y\n1: end\r\n");
    let err = a.fail(&["annotate", "-dx", "//depot/f.txt"]);
    assert!(err.contains("-dx"), "{err}");
}
