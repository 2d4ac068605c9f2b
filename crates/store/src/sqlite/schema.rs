//! Versioned schema migrations, tracked in `PRAGMA user_version`.

use crate::StoreError;
use rusqlite::Connection;

/// Each entry migrates from version `index` to `index + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: the core: users, depots, workspaces, changes, revisions, opened files.
    // Integration records, labels and shelves arrive as later migrations; revisions already
    // reference content by digest, so a lazy copy is just another row with the same digest.
    r#"
    CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    INSERT INTO counters VALUES ('change', 0);
    CREATE TABLE users (
        name TEXT PRIMARY KEY,
        created INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE depots (
        name TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        owner TEXT NOT NULL,
        description TEXT NOT NULL,
        created INTEGER NOT NULL
    ) WITHOUT ROWID;
    INSERT INTO depots VALUES ('depot', 'local', '', 'Default depot', 0);
    CREATE TABLE workspaces (
        name TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        host TEXT NOT NULL,
        root TEXT NOT NULL,
        description TEXT NOT NULL,
        options TEXT NOT NULL,
        view TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        accessed INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE changes (
        change INTEGER PRIMARY KEY,
        status TEXT NOT NULL,
        user TEXT NOT NULL,
        workspace TEXT NOT NULL,
        description TEXT NOT NULL,
        time INTEGER NOT NULL
    );
    CREATE INDEX changes_by_user ON changes (user, change);
    CREATE INDEX changes_by_workspace ON changes (workspace, change);
    CREATE TABLE revisions (
        path TEXT NOT NULL,
        rev INTEGER NOT NULL,
        change INTEGER NOT NULL,
        action TEXT NOT NULL,
        type TEXT NOT NULL,
        digest BLOB,
        size INTEGER NOT NULL,
        md5 TEXT NOT NULL,
        time INTEGER NOT NULL,
        PRIMARY KEY (path, rev)
    ) WITHOUT ROWID;
    CREATE INDEX revisions_by_change ON revisions (change, path);
    CREATE INDEX revisions_by_digest ON revisions (digest);
    CREATE TABLE opened (
        workspace TEXT NOT NULL,
        path TEXT NOT NULL,
        user TEXT NOT NULL,
        change INTEGER NOT NULL,
        action TEXT NOT NULL,
        type TEXT NOT NULL,
        base_rev INTEGER NOT NULL,
        move_file TEXT,
        PRIMARY KEY (workspace, path)
    ) WITHOUT ROWID;
    CREATE INDEX opened_by_path ON opened (path, workspace);
    "#,
    // 2: branching and merging, labels, branch specs, shelves, obliterate's purge queue.
    r#"
    ALTER TABLE opened ADD COLUMN lazy_digest BLOB;
    ALTER TABLE opened ADD COLUMN lazy_size INTEGER;
    ALTER TABLE opened ADD COLUMN lazy_md5 TEXT;
    ALTER TABLE opened ADD COLUMN integ_from TEXT;
    ALTER TABLE opened ADD COLUMN integ_start INTEGER;
    ALTER TABLE opened ADD COLUMN integ_end INTEGER;
    ALTER TABLE opened ADD COLUMN integ_base_path TEXT;
    ALTER TABLE opened ADD COLUMN integ_base_rev INTEGER;
    ALTER TABLE opened ADD COLUMN integ_resolved INTEGER;
    ALTER TABLE opened ADD COLUMN integ_how TEXT;
    CREATE INDEX opened_by_lazy_digest ON opened (lazy_digest) WHERE lazy_digest IS NOT NULL;
    CREATE TABLE integrations (
        to_path TEXT NOT NULL,
        to_rev INTEGER NOT NULL,
        from_path TEXT NOT NULL,
        from_start INTEGER NOT NULL,
        from_end INTEGER NOT NULL,
        how TEXT NOT NULL,
        change INTEGER NOT NULL,
        PRIMARY KEY (to_path, to_rev, from_path, from_end)
    ) WITHOUT ROWID;
    CREATE INDEX integrations_by_from ON integrations (from_path, from_end);
    CREATE TABLE labels (
        name TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        description TEXT NOT NULL,
        options TEXT NOT NULL,
        revision TEXT NOT NULL,
        view TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE label_revs (
        label TEXT NOT NULL,
        path TEXT NOT NULL,
        rev INTEGER NOT NULL,
        PRIMARY KEY (label, path)
    ) WITHOUT ROWID;
    CREATE INDEX label_revs_by_path ON label_revs (path, rev);
    CREATE TABLE branches (
        name TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        description TEXT NOT NULL,
        options TEXT NOT NULL,
        view TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE shelved (
        change INTEGER NOT NULL,
        path TEXT NOT NULL,
        action TEXT NOT NULL,
        type TEXT NOT NULL,
        digest BLOB,
        size INTEGER NOT NULL,
        md5 TEXT NOT NULL,
        base_rev INTEGER NOT NULL,
        move_file TEXT,
        PRIMARY KEY (change, path)
    ) WITHOUT ROWID;
    CREATE INDEX shelved_by_digest ON shelved (digest);
    CREATE TABLE purges (digest BLOB PRIMARY KEY) WITHOUT ROWID;
    "#,
    // 3: only content-owning revisions are indexed by digest. A revision whose content another
    // revision already owns (a branch, copy or other lazy copy) is marked `lazy` and left out
    // of the index, so a branch adds no random index entries (measured in BENCHMARKS.md's Design
    // choices at commit c1af4eb).
    // Obliterate hands ownership to a surviving lazy copy (`adopt_lazy_copies`), so "some
    // revision refers to this digest" stays one index probe.
    r#"
    ALTER TABLE revisions ADD COLUMN lazy INTEGER NOT NULL DEFAULT 0;
    DROP INDEX revisions_by_digest;
    CREATE INDEX revisions_by_digest ON revisions (digest) WHERE lazy = 0;
    "#,
    // 4: the same for open records: a lazy copy whose content a revision owns (every file of a
    // new branch) is marked `lazy_owned` and left out of the lazy-digest index; obliterate
    // clears the mark when the last owning revision goes.
    r#"
    ALTER TABLE opened ADD COLUMN lazy_owned INTEGER NOT NULL DEFAULT 0;
    DROP INDEX opened_by_lazy_digest;
    CREATE INDEX opened_by_lazy_digest ON opened (lazy_digest)
        WHERE lazy_digest IS NOT NULL AND lazy_owned = 0;
    "#,
    // 5: the revisions that delete a file, by path. Deletes are few, so this index stays small,
    // and "has this file ever been deleted" is a probe into it: `dirs` reads a file's head
    // action only for the files it finds there (`next_live_subdir_path`). The list is the
    // queries' `deleted_actions!()`.
    r#"
    CREATE INDEX revisions_deleted ON revisions (path)
        WHERE action IN ('delete', 'move/delete');
    "#,
    // 6: the triggers table (`keel triggers`), one row per line in table order (`seq`).
    r#"
    CREATE TABLE triggers (
        seq INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        command TEXT NOT NULL
    );
    "#,
    // 7: users' specs and password hashes, login tickets, and server settings (`keel
    // configure`). A password is stored only as its argon2id hash (a PHC string) and a ticket
    // only as the BLAKE3 hash of its random bytes.
    r#"
    ALTER TABLE users ADD COLUMN email TEXT NOT NULL DEFAULT '';
    ALTER TABLE users ADD COLUMN full_name TEXT NOT NULL DEFAULT '';
    ALTER TABLE users ADD COLUMN type TEXT NOT NULL DEFAULT 'standard';
    ALTER TABLE users ADD COLUMN updated INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE users ADD COLUMN accessed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE users ADD COLUMN password_hash TEXT;
    UPDATE users SET updated = created, accessed = created;
    CREATE TABLE tickets (
        hash BLOB PRIMARY KEY,
        user TEXT NOT NULL,
        host TEXT NOT NULL,
        issued INTEGER NOT NULL,
        expires INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX tickets_by_user ON tickets (user);
    CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    "#,
    // 8: access control: groups (members, subgroups and owners as newline-separated names;
    // a limit is NULL when unset, -1 when unlimited) and the protections table, one row per
    // line in table order. Every change to either bumps the `access` counter, which the
    // service compares to know when its compiled copy is stale (also on a replica, where the
    // change arrives through the journal).
    r#"
    CREATE TABLE groups (
        name TEXT PRIMARY KEY,
        users TEXT NOT NULL,
        subgroups TEXT NOT NULL,
        owners TEXT NOT NULL,
        max_results INTEGER,
        max_scan_rows INTEGER,
        max_lock_time INTEGER,
        max_open_files INTEGER,
        timeout INTEGER,
        updated INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE protections (line INTEGER PRIMARY KEY, text TEXT NOT NULL);
    INSERT INTO counters VALUES ('access', 0);
    "#,
    // 9: who set a user's Type. A Type other than standard counts (the service user's
    // content-by-digest bypass) only when a super user set it; types stored before this
    // column existed have no setter, so they count again only once a super user saves the
    // spec (`user -f -i`).
    r#"
    ALTER TABLE users ADD COLUMN type_set_by TEXT;
    "#,
    // 10: a login ticket may be bound to the client address it was issued to (`login` without
    // `-a` when `auth.tickets.bind` says so); empty: valid from every address.
    r#"
    ALTER TABLE tickets ADD COLUMN address TEXT NOT NULL DEFAULT '';
    "#,
    // 11: the typemap (`keel typemap`): one row per line in table order (`seq`); `pattern`
    // starts with `-` for an exclusion.
    r#"
    CREATE TABLE typemap (
        seq INTEGER PRIMARY KEY,
        file_type TEXT NOT NULL,
        pattern TEXT NOT NULL
    );
    "#,
    // 12: an opened file may be locked (`lock`): others may open it but not submit it until
    // it is submitted, reverted or unlocked; the lock goes with the open record.
    r#"
    ALTER TABLE opened ADD COLUMN locked INTEGER NOT NULL DEFAULT 0;
    "#,
    // 13: the webhooks table (`keel webhooks`), one row per line in table order (`seq`), and each
    // webhook's delivery state by name: the last change delivered and how the next is going.
    r#"
    CREATE TABLE webhooks (
        seq    INTEGER PRIMARY KEY,
        name   TEXT NOT NULL UNIQUE,
        path   TEXT NOT NULL,
        url    TEXT NOT NULL,
        secret TEXT
    );
    CREATE TABLE webhook_state (
        name         TEXT PRIMARY KEY,
        delivered    INTEGER NOT NULL,
        attempts     INTEGER NOT NULL DEFAULT 0,
        sent         INTEGER NOT NULL DEFAULT 0,
        failures     INTEGER NOT NULL DEFAULT 0,
        last_attempt INTEGER NOT NULL DEFAULT 0,
        last_status  TEXT NOT NULL DEFAULT ''
    );
    "#,
    // 14: jobs (bugs and change requests): the job spec (one row; none: the default spec),
    // jobs with their values as a JSON list of (field, value), the word index `jobs -e`
    // searches (lowercase words of text fields, whole values of the others, kept by `put_job`),
    // and fixes linking jobs to changes.
    r#"
    CREATE TABLE job_spec (id INTEGER PRIMARY KEY CHECK (id = 1), text TEXT NOT NULL,
        updated INTEGER NOT NULL);
    CREATE TABLE jobs (
        name TEXT PRIMARY KEY,
        fields TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        accessed INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE job_words (
        field TEXT NOT NULL,
        word TEXT NOT NULL,
        job TEXT NOT NULL,
        PRIMARY KEY (field, word, job)
    ) WITHOUT ROWID;
    CREATE INDEX job_words_by_word ON job_words (word, job);
    CREATE INDEX job_words_by_job ON job_words (job);
    CREATE TABLE fixes (
        job TEXT NOT NULL,
        change INTEGER NOT NULL,
        user TEXT NOT NULL,
        workspace TEXT NOT NULL,
        date INTEGER NOT NULL,
        status TEXT NOT NULL,
        PRIMARY KEY (job, change)
    ) WITHOUT ROWID;
    CREATE INDEX fixes_by_change ON fixes (change, job);
    "#,
    // 15: counters and keys (`keel counter`, `keel key`): named values for scripts, one
    // namespace each (`space` 0: counters, 1: keys). `counters` above is the server's own.
    // And users' `Reviews` field (newline-separated depot patterns) for `reviews`.
    r#"
    CREATE TABLE user_counters (
        space INTEGER NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (space, name)
    ) WITHOUT ROWID;
    ALTER TABLE users ADD COLUMN reviews TEXT NOT NULL DEFAULT '';
    "#,
    // 16: a file's own modification time, recorded at submit (`+m` files and `modtime`
    // workspaces sync to it): on revisions, on shelved files, and on open records' lazy
    // content (an unshelved or copied file keeps the time its content came with). 0: none.
    r#"
    ALTER TABLE revisions ADD COLUMN mod_time INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE shelved ADD COLUMN mod_time INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE opened ADD COLUMN lazy_mod_time INTEGER NOT NULL DEFAULT 0;
    "#,
    // 17: a user's password verifier for P4 clients holding the password (`p4_password_digests`),
    // sealed with a key outside the database; NULL: none.
    r#"
    ALTER TABLE users ADD COLUMN p4_digest TEXT;
    "#,
];

/// Brings the database up to the newest schema, one transaction per step.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, MIGRATIONS.len() as u16)
}

/// The database's schema version.
pub(crate) fn schema_version(conn: &Connection) -> Result<u16, StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok(version as u16)
}

/// Brings the database up to schema `version` (at most the newest), one transaction per step.
pub(crate) fn migrate_to(conn: &mut Connection, version: u16) -> Result<(), StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let supported = MIGRATIONS.len() as i64;
    if current > supported || i64::from(version) > supported {
        return Err(StoreError::SchemaTooNew {
            found: current.max(i64::from(version)),
            supported,
        });
    }
    for (index, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .take(version as usize)
        .skip(current as usize)
    {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{MIGRATIONS, migrate, migrate_to};
    use rusqlite::Connection;

    /// Revisions, shelved files and open records written before the modification time was
    /// recorded read back 0 ("none recorded"), so sync falls back to the submit time.
    #[test]
    fn rows_from_before_the_modification_time_migration_have_none_recorded() {
        let before = MIGRATIONS
            .iter()
            .position(|m| m.contains("ADD COLUMN mod_time"))
            .expect("the migration adding mod_time");
        let mut conn = Connection::open_in_memory().expect("open");
        migrate_to(&mut conn, before as u16).expect("migrate to the schema before it");
        conn.execute_batch(
            "INSERT INTO revisions (path, rev, change, action, type, digest, size, md5, time) \
               VALUES ('//depot/old', 1, 1, 'add', 'binary+m', NULL, 0, '', 77);
             INSERT INTO shelved (change, path, action, type, digest, size, md5, base_rev) \
               VALUES (2, '//depot/old', 'edit', 'binary+m', NULL, 0, '', 1);
             INSERT INTO opened (workspace, path, user, change, action, type, base_rev) \
               VALUES ('w', '//depot/old', 'u', 2, 'edit', 'binary+m', 1);",
        )
        .expect("rows at the old schema");
        migrate(&mut conn).expect("migrate to the newest schema");
        let times: (i64, i64, i64) = conn
            .query_row(
                "SELECT (SELECT mod_time FROM revisions), (SELECT mod_time FROM shelved), \
                 (SELECT lazy_mod_time FROM opened)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .expect("read back");
        assert_eq!(times, (0, 0, 0));
    }
}
