//! The client's workspace compared with its have list, for `reconcile`, `status` and `clean`:
//! the server knows the have list and the view, the client knows its files, so the scan is a
//! conversation of callbacks. Each have file is asked about (`client-ReconcileEdit`: missing,
//! the same digest, or different), which also tells the client the files the depot knows;
//! then each directory an argument covers is listed (`client-ReconcileAdd`, with the view's
//! right-hand side in local syntax so the client keeps only mapped files and leaves out the
//! known ones and those its ignore files cover); `client-ReconcileFlush` ends it. The server
//! decides what is an add, an edit or a delete; nothing is opened here.

use crate::client_ops;
use crate::cmd::{Cmd, CmdError};
use crate::commands::workspace::{Work, escape};
use crate::transfer::to_client::client_type;
use crate::wire::message::Message;
use keel_core::keyword::{self, KeywordValues};
use keel_core::{FileType, Keywords, LineKind};
use keel_service::{ContentOf, FileInfo, ServiceError};
use md5::{Digest as _, Md5};
use std::collections::{BTreeMap, BTreeSet};

/// The function the client calls with a have file's status.
const EDIT_CONFIRM: &str = "dm-ReconcileEdit";
/// The function the client calls with the files it found in a directory.
const ADD_CONFIRM: &str = "dm-ReconcileAdd";

/// Which kinds of work to look for (`-a`, `-e`, `-d`; none given means all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Want {
    pub add: bool,
    pub edit: bool,
    pub delete: bool,
}

impl Want {
    /// From the flags: none of the three means all of them.
    pub fn of(add: bool, edit: bool, delete: bool) -> Want {
        if !(add || edit || delete) {
            return Want {
                add: true,
                edit: true,
                delete: true,
            };
        }
        Want { add, edit, delete }
    }
}

/// A new file the client found.
#[derive(Debug, Clone)]
pub struct NewFile {
    /// Its local path, as the client named it.
    pub local: String,
    /// Its path in workspace syntax (`//ws/rel`, `@#%*` escaped).
    pub client_path: String,
}

/// What the scan found.
#[derive(Debug, Default)]
pub struct Found {
    pub add: Vec<NewFile>,
    /// Have files whose content differs (not opened).
    pub edit: Vec<FileInfo>,
    /// Have files missing from the workspace (not opened).
    pub delete: Vec<FileInfo>,
    /// New files left out because their names hold `@#%*` and `-f` was not given.
    pub wildcards: Vec<String>,
    /// Missing have files paired with a new file of the same content (moved outside Keel).
    pub moves: Vec<(FileInfo, NewFile)>,
}

impl Found {
    /// Whether the scan found nothing to open (new files with wildcard names aside).
    pub fn is_empty(&self) -> bool {
        self.add.is_empty()
            && self.edit.is_empty()
            && self.delete.is_empty()
            && self.moves.is_empty()
    }
}

/// How the scan runs.
pub struct ScanOptions {
    pub want: Want,
    /// `-I`: the client's ignore files are not applied.
    pub no_ignore: bool,
    /// `-f`: new files whose names hold `@#%*` are taken (escaped).
    pub wildcard_names: bool,
    /// A missing file and a new file with its content are a move (when adds and deletes are
    /// both looked for).
    pub moves: bool,
}

/// Compares the files under `args` (workspace or depot syntax) with the have list.
pub async fn scan(
    cmd: &mut Cmd,
    work: &Work,
    args: &[String],
    options: &ScanOptions,
) -> Result<Found, CmdError> {
    let have_args = args.to_vec();
    let haves = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.have_list(caller, &have_args, &mut |f| {
                out.push(f);
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    let opened_args = args.to_vec();
    let opened: Vec<(String, Option<String>)> = cmd
        .call(move |svc, caller| {
            let mut out = Vec::new();
            svc.opened(caller, &opened_args, false, "", None, &mut |f| {
                out.push((f.depot_file.to_string(), f.client_file));
                Ok(())
            })
            .map(|()| out)
        })
        .await??;
    let opened_rel: BTreeSet<String> = opened.iter().filter_map(|(_, r)| r.clone()).collect();
    let opened: BTreeSet<String> = opened.into_iter().map(|(d, _)| d).collect();
    let mut found = Found::default();
    let statuses = ask_have_files(cmd, work, &haves).await?;
    // The have files are never adds, whatever the client listed (a client that did not
    // compare a file's digest, P4Java's with a binary file, lists it as new).
    let known: BTreeSet<String> = haves.iter().filter_map(|f| f.client_file.clone()).collect();
    for (i, f) in haves.into_iter().enumerate() {
        if opened.contains(f.depot_file.as_str()) {
            continue;
        }
        match statuses.get(&i).map(String::as_str) {
            Some("missing") if options.want.delete => found.delete.push(f),
            Some("exists") if options.want.edit => found.edit.push(f),
            _ => {}
        }
    }
    if options.want.add {
        let mut seen = BTreeSet::new();
        for local in list_new_files(cmd, work, args, options.no_ignore).await? {
            if !seen.insert(local.clone()) {
                continue;
            }
            let Some(client_path) = client_path_of(work, &local, options.wildcard_names) else {
                found.wildcards.push(local);
                continue;
            };
            let rel = client_path
                .strip_prefix(&format!("//{}/", work.place.workspace))
                .unwrap_or_default()
                .to_string();
            if opened_rel.contains(&rel)
                || known.contains(&rel)
                || !args.iter().any(|a| covers(work, a, &client_path))
            {
                continue;
            }
            found.add.push(NewFile { local, client_path });
        }
    }
    if options.moves && options.want.add && options.want.delete {
        pair_moves(cmd, &mut found).await?;
    }
    // The client forgets the list of known files.
    cmd.conn
        .send(&Message::new().with("func", "client-ReconcileFlush"));
    Ok(found)
}

/// At most this many (missing file, new file) comparisons the client is asked to make; past
/// it, missing and new files stay a delete and an add.
const MOVE_COMPARISONS: usize = 100_000;

/// Pairs each missing have file with a new file whose content is the same, which the client
/// finds (`client-ExactMatch`: the missing file's digest, the new files as candidates; it
/// answers with the first that matches). A new file pairs with one missing file at most.
async fn pair_moves(cmd: &mut Cmd, found: &mut Found) -> Result<(), CmdError> {
    if found.delete.is_empty()
        || found.add.is_empty()
        || found.delete.len().saturating_mul(found.add.len()) > MOVE_COMPARISONS
    {
        return Ok(());
    }
    let expanded = expanded_digests(cmd, &found.delete).await?;
    let asks: Vec<Message> = found
        .delete
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let (md5, size) = match expanded.get(&i) {
                Some((md5, size)) => (md5.clone(), *size),
                None if !f.head_md5.is_empty() => (f.head_md5.to_uppercase(), f.head_size),
                None => return None,
            };
            let t = f.head_type.unwrap_or(FileType::TEXT);
            let mut m = Message::new()
                .with("type", client_type(&t))
                .with("digest", md5)
                .with("fileSize", size.to_string())
                .with("keelKey", i.to_string());
            for (j, new) in found.add.iter().enumerate() {
                m.set(format!("toFile{j}"), &new.local);
                m.set(format!("index{j}"), j.to_string());
            }
            m.set("confirm", EDIT_CONFIRM);
            m.set("func", "client-ExactMatch");
            Some(m)
        })
        .collect();
    let mut pairs: BTreeMap<usize, usize> = BTreeMap::new();
    let mut taken = BTreeSet::new();
    for batch in asks.chunks(client_ops::BATCH) {
        for reply in client_ops::exchange(cmd, batch).await? {
            if reply.func().as_deref() != Some(EDIT_CONFIRM) {
                continue;
            }
            let key = reply.text("keelKey").and_then(|k| k.parse::<usize>().ok());
            let index = reply.text("index").and_then(|k| k.parse::<usize>().ok());
            if let (Some(key), Some(index)) = (key, index)
                && index < found.add.len()
                && taken.insert(index)
            {
                pairs.insert(key, index);
            }
        }
    }
    if pairs.is_empty() {
        return Ok(());
    }
    let deletes = std::mem::take(&mut found.delete);
    let mut adds: Vec<Option<NewFile>> = std::mem::take(&mut found.add)
        .into_iter()
        .map(Some)
        .collect();
    for (i, f) in deletes.into_iter().enumerate() {
        match pairs.get(&i).and_then(|j| adds[*j].take()) {
            Some(new) => found.moves.push((f, new)),
            None => found.delete.push(f),
        }
    }
    found.add = adds.into_iter().flatten().collect();
    Ok(())
}

/// Asks the client about each have file; its status (`missing`, `same`, `exists`: present
/// with other content) by index. The digest is sent even when edits are not looked for:
/// the client counts a file as known to the depot (not to be added) only when it compared
/// its digest.
async fn ask_have_files(
    cmd: &mut Cmd,
    work: &Work,
    haves: &[FileInfo],
) -> Result<BTreeMap<usize, String>, CmdError> {
    let mut out = BTreeMap::new();
    let expanded = expanded_digests(cmd, haves).await?;
    let asks: Vec<Message> = haves
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let local = work.local_of_rel(f.client_file.as_deref()?);
            let t = f.head_type.unwrap_or(FileType::TEXT);
            let mut m = Message::new()
                .with("path", &local)
                .with("type", client_type(&t))
                .with("keelKey", i.to_string());
            if let Some((md5, size)) = expanded.get(&i) {
                m.set("digest", md5);
                m.set("digestType", "md5");
                m.set("fileSize", size.to_string());
            } else if !f.head_md5.is_empty() {
                m.set("digest", f.head_md5.to_uppercase());
                m.set("digestType", "md5");
                m.set("fileSize", f.head_size.to_string());
            }
            m.set("confirm", EDIT_CONFIRM);
            m.set("func", "client-ReconcileEdit");
            Some(m)
        })
        .collect();
    for batch in asks.chunks(client_ops::BATCH) {
        for reply in client_ops::exchange(cmd, batch).await? {
            if reply.func().as_deref() != Some(EDIT_CONFIRM) {
                continue;
            }
            if let (Some(key), Some(status)) = (
                reply.text("keelKey").and_then(|k| k.parse::<usize>().ok()),
                reply.text("status"),
            ) {
                out.insert(key, status);
            }
        }
    }
    Ok(out)
}

/// The MD5 (upper-case hex) and size of each `+k` have file as a sync wrote it, its keywords
/// expanded with its revision's values, by index: the client compares its file with these,
/// and the recorded MD5 is of the unexpanded text.
async fn expanded_digests(
    cmd: &mut Cmd,
    haves: &[FileInfo],
) -> Result<BTreeMap<usize, (String, u64)>, CmdError> {
    let wanted: Vec<(usize, FileInfo, Keywords)> = haves
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let which = f.head_type?.expanded_keywords();
            (which != Keywords::None && f.head_digest.is_some()).then(|| (i, f.clone(), which))
        })
        .collect();
    if wanted.is_empty() {
        return Ok(BTreeMap::new());
    }
    cmd.call(move |svc, caller| {
        let mut out = BTreeMap::new();
        for (i, f, which) in wanted {
            let Some(digest) = f.head_digest else {
                continue;
            };
            let what = format!("{}#{}", f.depot_file, f.have_rev);
            let of = ContentOf {
                depot_file: f.depot_file.to_string(),
                rev: f.have_rev,
            };
            let data = svc
                .content(caller, &digest.to_hex(), Some(&of))?
                .read_content(f.head_size)
                .map_err(|e| ServiceError::ContentUnreadable {
                    file: what,
                    reason: e.to_string(),
                })?;
            let values = KeywordValues {
                depot_file: f.depot_file.as_str(),
                rev: f.have_rev,
                change: f.head_change.map(|c| c.0).unwrap_or_default(),
                time: f.head_time,
                author: &f.user,
            };
            let data = keyword::expand(&data, which, &values);
            out.insert(
                i,
                (hex::encode_upper(Md5::digest(&data)), data.len() as u64),
            );
        }
        Ok::<_, ServiceError>(out)
    })
    .await?
    .map_err(CmdError::from)
}

/// The local directory (or file) an argument covers and whether its subdirectories count.
fn scan_root(work: &Work, arg: &str) -> Option<(String, bool)> {
    let local = work.local_of_arg(arg)?;
    let sep = if local.contains('\\') && !local.contains('/') {
        '\\'
    } else {
        '/'
    };
    let cut = |s: &str| s.trim_end_matches(['/', '\\']).to_string();
    if let Some(dir) = local.strip_suffix("...") {
        let dir = cut(dir);
        return Some((if dir.is_empty() { sep.to_string() } else { dir }, true));
    }
    if local.contains(['*']) || local.contains("...") {
        // A wildcard inside the path: the directory above its first wildcard, all of it,
        // the argument filtering what comes back.
        let first = [local.find('*'), local.find("...")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(local.len());
        let head = &local[..first];
        let dir = head.rsplit_once(['/', '\\']).map(|(d, _)| d).unwrap_or("");
        return Some((cut(dir), true));
    }
    Some((local, false))
}

/// Lists the new files under each argument's directory: the client's full local paths of
/// files in the view that are not in the have list (and not ignored, unless `no_ignore`).
async fn list_new_files(
    cmd: &mut Cmd,
    work: &Work,
    args: &[String],
    no_ignore: bool,
) -> Result<Vec<String>, CmdError> {
    let Some(view) = work.view() else {
        return Ok(Vec::new());
    };
    let prefix = format!("//{}/", work.place.workspace);
    let map: Vec<String> = view
        .lines()
        .iter()
        .filter_map(|l| {
            let local = work.place.local(&l.right)?;
            let mark = match l.kind {
                LineKind::Exclude => "-",
                LineKind::Overlay => "+",
                LineKind::Include => "",
            };
            l.right
                .starts_with(&prefix)
                .then(|| format!("{mark}{local}"))
        })
        .collect();
    let mut asks = Vec::new();
    for arg in args {
        let Some((dir, traverse)) = scan_root(work, arg) else {
            continue;
        };
        let mut m = Message::new().with("dir", &dir);
        if traverse {
            m.set("traverse", "1");
        }
        if no_ignore {
            m.set("skipIgnore", "1");
        }
        for (i, line) in map.iter().enumerate() {
            m.set(format!("mapTable{i}"), line);
        }
        m.set("confirm", ADD_CONFIRM);
        m.set("func", "client-ReconcileAdd");
        asks.push(m);
    }
    let mut out = Vec::new();
    for reply in client_ops::exchange(cmd, &asks).await? {
        if reply.func().as_deref() != Some(ADD_CONFIRM) {
            continue;
        }
        // The client sends its list in parts of up to a thousand (`file0`, `file1`, ...).
        for i in 0.. {
            match reply.text(&format!("file{i}")) {
                Some(f) => out.push(f),
                None => break,
            }
        }
    }
    Ok(out)
}

/// The workspace-syntax path of a local file the client found; `None` when its name holds
/// `@#%*` and `wildcard_names` is not set.
fn client_path_of(work: &Work, local: &str, wildcard_names: bool) -> Option<String> {
    let root = work.place.root.trim_end_matches(['/', '\\']);
    let rel = local.strip_prefix(root)?.trim_start_matches(['/', '\\']);
    let rel = rel.replace('\\', "/");
    if rel.contains(['@', '#', '%', '*']) && !wildcard_names {
        return None;
    }
    Some(format!("//{}/{}", work.place.workspace, escape(&rel)))
}

/// Whether the argument `arg` (workspace or depot syntax, wildcards allowed) covers the file
/// `client_path` (workspace syntax). Depot-syntax arguments cover what their directory
/// listing found (the client listed only below them).
fn covers(work: &Work, arg: &str, client_path: &str) -> bool {
    let (path, _) = crate::filespec::split_rev(arg);
    let pattern = if path.starts_with(&format!("//{}/", work.place.workspace)) {
        path.to_string()
    } else {
        match work.view().and_then(|v| v.translate(path)) {
            Some(p) => p,
            None => return true,
        }
    };
    wildcard_match(pattern.as_bytes(), client_path.as_bytes())
}

/// P4's wildcards: `...` matches anything, `*` anything but `/`.
fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    if pattern.is_empty() {
        return text.is_empty();
    }
    if pattern.starts_with(b"...") {
        let rest = &pattern[3..];
        return (0..=text.len()).any(|i| wildcard_match(rest, &text[i..]));
    }
    if pattern[0] == b'*' {
        let rest = &pattern[1..];
        let stop = text.iter().position(|&c| c == b'/').unwrap_or(text.len());
        return (0..=stop).any(|i| wildcard_match(rest, &text[i..]));
    }
    !text.is_empty() && pattern[0] == text[0] && wildcard_match(&pattern[1..], &text[1..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_p4_paths_do() {
        let m = |p: &str, t: &str| wildcard_match(p.as_bytes(), t.as_bytes());
        assert!(m("//ws/...", "//ws/a/b/c.txt"));
        assert!(m("//ws/a/*", "//ws/a/b.txt"));
        assert!(!m("//ws/a/*", "//ws/a/b/c.txt"));
        assert!(m("//ws/a/....txt", "//ws/a/b/c.txt"));
        assert!(!m("//ws/a/....txt", "//ws/a/b/c.bin"));
        assert!(m("//ws/a.txt", "//ws/a.txt"));
        assert!(!m("//ws/a.txt", "//ws/a.txtx"));
    }

    #[test]
    fn no_kind_flag_means_every_kind() {
        assert_eq!(
            Want::of(false, false, false),
            Want {
                add: true,
                edit: true,
                delete: true
            }
        );
        assert_eq!(
            Want::of(true, false, false),
            Want {
                add: true,
                edit: false,
                delete: false
            }
        );
    }
}
