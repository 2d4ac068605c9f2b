//! Opening files: `add`, `edit`, `delete`, `move`, `reopen`, and listing them with `opened`.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use keel_client::add_walk::{WalkIgnore, WalkedFile, walk_files, walked_type};
use keel_client::ignore_rules::{self, IgnoreConfig};
use keel_client::ops::{self, FileResult, OpenFor, OpenQuery, OpenedQuery, ReopenQuery};
use keel_client::workspace_scan::detect_type;
use keel_client::{WorkspaceCtx, paths, transfer};
use keel_core::{FileAction, PathPattern};

use super::file_results::list_results;
use super::records::{opened_file_line, opened_file_record};
use crate::cli::{AddArgs, ChangeFilesArgs, MoveArgs, OpenArgs, OpenedArgs};
use crate::session::Session;

/// Opens `files` for `action` and returns the opened records.
pub async fn open_files(
    s: &Session,
    action: OpenFor,
    files: Vec<String>,
    change: Option<u64>,
    file_type: Option<String>,
    add_types: Vec<String>,
) -> Result<Vec<FileResult>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let query = OpenQuery {
        action,
        paths: files,
        change,
        file_type,
        add_types,
    };
    Ok(ops::open(&s.conn, query).await?.all().await?)
}

/// A file `add` names: its local path, its path below the workspace root, and, when a
/// directory walk found it, what the walk saw.
struct AddFile {
    local: PathBuf,
    rel: String,
    walked: Option<WalkedFile>,
}

pub async fn add(s: &mut Session, args: AddArgs) -> Result<()> {
    let ws = s.workspace().await?;
    let ignore = s.ignore_config(!args.no_ignore);
    let mut locals: Vec<AddFile> = Vec::new();
    let mut expanded = false;
    let mut ignored = Vec::new();
    for arg in &args.files {
        let local = local_arg(&ws, arg, &s.cwd)?;
        let text = local.to_string_lossy().to_string();
        // A symlink is added as itself (type symlink), even one to a directory: never walked.
        let link = std::fs::symlink_metadata(&local).is_ok_and(|m| m.file_type().is_symlink());
        if paths::has_wildcards(&text) || (local.is_dir() && !link) {
            expanded = true;
            locals.extend(expand_local(&ws, &local, &ignore)?);
        } else if link || local.exists() {
            // Neither the file nor a directory above it may lead out of the workspace.
            let parent = local.parent().unwrap_or(&ws.root);
            paths::check_inside_root(&ws.root, parent, &local)?;
            let rel = paths::relative_to_root(&local, &ws.root)?;
            if !ignore.is_empty()
                && ignore_rules::check_path(&ignore, &ws.root, &rel)?.is_some_and(|v| v.ignored)
            {
                ignored.push(format!(
                    "{} - ignored file can't be added (keel ignores -v -i names the rule; -I adds it anyway).",
                    local.display()
                ));
                continue;
            }
            locals.push(AddFile {
                local,
                rel,
                walked: None,
            });
        } else {
            bail!("{} - no such file", local.display());
        }
    }
    // A named file an ignore rule covers refuses the whole command: nothing is opened.
    if !ignored.is_empty() {
        bail!("{}", ignored.join("\n"));
    }
    if expanded {
        // Wildcard expansion adds only new files, as `p4 add ...` does.
        let have = ops::have(&s.conn, &ws, Vec::new()).await?;
        let opened = ops::opened(&s.conn, OpenedQuery::default())
            .await?
            .all()
            .await?;
        let known: HashSet<String> = have
            .into_iter()
            .map(|h| h.client_file)
            .filter(|c| !c.is_empty())
            .chain(opened.into_iter().filter_map(|o| {
                if o.client_file.is_empty() {
                    ws.client_of_depot(&o.depot_file)
                } else {
                    Some(o.client_file)
                }
            }))
            .collect();
        if !known.is_empty() {
            locals.retain(|file| !known.contains(&file.rel));
        }
    }
    // One walk yields path order already: the sort then only confirms it.
    locals.sort_by(|a, b| a.local.cmp(&b.local));
    locals.dedup_by(|a, b| a.local == b.local);
    let mut files = Vec::with_capacity(locals.len());
    let mut types = Vec::with_capacity(locals.len());
    let mut in_view = Vec::with_capacity(locals.len());
    for file in &locals {
        if ws.depot_of_client(&file.rel).is_none() {
            if expanded {
                continue;
            }
            bail!("{} - file(s) not in client view.", file.local.display());
        }
        files.push(ws.workspace_path(&file.rel));
        types.push(match &file.walked {
            Some(walked) => walked_type(walked)?,
            None => detect_type(&file.local)?,
        });
        in_view.push(file.local.as_path());
    }
    if files.is_empty() {
        s.out.note("No files to add.");
        return Ok(());
    }
    check_utf16_adds(&in_view, &types, args.file_type.as_deref())?;
    let records = open_files(s, OpenFor::Add, files, args.change, args.file_type, types).await?;
    list_results(s.out, Some(&ws), &records);
    Ok(())
}

/// Refuses the whole add, before anything is opened, when a file that would be added as
/// `utf16` (detected so, or by `-t`) is not valid UTF-16. `locals[i]` was detected as
/// `types[i]`.
fn check_utf16_adds(locals: &[&Path], types: &[String], file_type: Option<&str>) -> Result<()> {
    let change = file_type.and_then(|t| keel_core::TypeChange::parse(t).ok());
    for (file, detected) in locals.iter().zip(types) {
        let Ok(detected) = keel_core::FileType::parse(detected) else {
            continue;
        };
        let effective = change.map_or(detected, |c| c.apply(detected));
        if effective.base == keel_core::BaseType::Utf16 {
            keel_client::keywords::check_utf16(file)?;
        }
    }
    Ok(())
}

/// A file argument as an absolute local path (`//WS/...` arguments are mapped back).
fn local_arg(ws: &WorkspaceCtx, arg: &str, cwd: &Path) -> Result<PathBuf> {
    if let Some(rel) = arg.strip_prefix(&format!("//{}/", ws.name)) {
        return Ok(ws.display_local(rel));
    }
    if paths::is_depot_syntax(arg) {
        let rel = ws
            .client_of_depot(arg)
            .with_context(|| format!("{arg} - file(s) not in client view"))?;
        return Ok(ws.display_local(&rel));
    }
    let path = paths::absolute_local(arg, cwd);
    paths::relative_to_root(&path, &ws.root)?;
    Ok(path)
}

/// Expands a local directory or wildcard path into the files it names.
fn expand_local(ws: &WorkspaceCtx, local: &Path, ignore: &IgnoreConfig) -> Result<Vec<AddFile>> {
    let mut pattern_path = local.to_path_buf();
    if !paths::has_wildcards(&local.to_string_lossy()) {
        pattern_path.push("...");
    }
    let mut base = PathBuf::new();
    for component in pattern_path.components() {
        if let Component::Normal(part) = component
            && paths::has_wildcards(&part.to_string_lossy())
        {
            break;
        }
        base.push(component.as_os_str());
    }
    let rel = paths::relative_to_root(&pattern_path, &ws.root)?;
    // The walk follows no symlink below `base`; `base` itself must not lead out either.
    paths::check_inside_root(&ws.root, &base, &base)?;
    let pattern = PathPattern::parse(&ws.workspace_path(&rel))?;
    // The walk names each file below `base`; `base` itself is mapped to the root once (a
    // root whose own name holds a wildcard maps each file instead).
    let base_rel = paths::relative_to_root(&base, &ws.root).ok();
    let mut out = Vec::new();
    // The rules in effect in `base` (its own ignore files and those above it); a `base` an
    // ignore rule covers has no files to add.
    let scope = match base_rel.as_deref() {
        Some(dir_rel) if !ignore.is_empty() => {
            let inside = if dir_rel.is_empty() {
                "-".to_string()
            } else {
                format!("{dir_rel}/-")
            };
            let (rules, verdict) = ignore_rules::rules_for(ignore, &ws.root, &inside)?;
            if verdict.is_some() {
                return Ok(out);
            }
            Some(WalkIgnore {
                config: ignore,
                rules,
                dir_rel: dir_rel.to_string(),
            })
        }
        _ => None,
    };
    for walked in walk_files(&base, scope.as_ref())? {
        let rel = match base_rel.as_deref() {
            Some("") => walked.rel.clone(),
            Some(base_rel) => format!("{base_rel}/{}", walked.rel),
            None => match paths::relative_to_root(&walked.path, &ws.root) {
                Ok(rel) => rel,
                Err(_) => continue,
            },
        };
        if pattern.matches(&ws.workspace_path(&rel)) {
            out.push(AddFile {
                local: walked.path.clone(),
                rel,
                walked: Some(walked),
            });
        }
    }
    Ok(out)
}

pub async fn edit(s: &mut Session, args: OpenArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let files = s.file_args(&args.files).await?;
    let records = open_files(
        s,
        OpenFor::Edit,
        files,
        args.change,
        args.file_type,
        Vec::new(),
    )
    .await?;
    list_results(s.out, Some(&ws), &records);
    for record in &records {
        if let Some(client_file) = record.client_file_in(&ws) {
            transfer::make_writable(&ws.local(&client_file)?)?;
        }
    }
    Ok(())
}

pub async fn delete(s: &mut Session, args: ChangeFilesArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let files = s.file_args(&args.files).await?;
    let records = open_files(s, OpenFor::Delete, files, args.change, None, Vec::new()).await?;
    list_results(s.out, Some(&ws), &records);
    for record in &records {
        if let Some(client_file) = record.client_file_in(&ws) {
            transfer::remove_local(&ws.root, &ws.local(&client_file)?, ws.options.rmdir)?;
        }
    }
    Ok(())
}

pub async fn move_file(s: &mut Session, args: MoveArgs) -> Result<()> {
    let ws = s.writing_workspace().await?;
    let from = s
        .file_args(std::slice::from_ref(&args.from))
        .await?
        .remove(0);
    let to = s.file_args(std::slice::from_ref(&args.to)).await?.remove(0);
    let records = ops::move_file(&s.conn, from, to, args.change)
        .await?
        .all()
        .await?;
    list_results(s.out, Some(&ws), &records);
    let local_for = |action: FileAction| -> Result<Option<PathBuf>> {
        match records.iter().find(|r| r.action == Some(action)) {
            Some(r) => match r.client_file_in(&ws) {
                Some(c) => Ok(Some(ws.local(&c)?)),
                None => Ok(None),
            },
            None => Ok(None),
        }
    };
    if let (Some(old), Some(new)) = (
        local_for(FileAction::MoveDelete)?,
        local_for(FileAction::MoveAdd)?,
    ) && std::fs::symlink_metadata(&old).is_ok()
        && std::fs::symlink_metadata(&new).is_err()
    {
        if let Some(dir) = new.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::rename(&old, &new)
            .with_context(|| format!("cannot rename {} to {}", old.display(), new.display()))?;
        if ws.options.rmdir {
            transfer::remove_local(&ws.root, &old, true)?;
        }
    }
    Ok(())
}

pub async fn reopen(s: &mut Session, args: OpenArgs) -> Result<()> {
    let ws = s.workspace().await?;
    let files = s.file_args(&args.files).await?;
    let query = ReopenQuery {
        paths: files,
        change: args.change,
        file_type: args.file_type,
    };
    let records = ops::reopen(&s.conn, query).await?.all().await?;
    list_results(s.out, Some(&ws), &records);
    Ok(())
}

pub async fn opened(s: &mut Session, args: OpenedArgs) -> Result<()> {
    let query = OpenedQuery {
        paths: s.file_args(&args.files).await?,
        all_workspaces: args.all,
        user: args.user.clone(),
        change: args.change,
    };
    let ws = if s.settings.workspace.is_some() {
        Some(s.workspace().await?)
    } else {
        None
    };
    // Read whole first, as `files`: a listing the server stops part way prints nothing.
    let files = ops::opened(&s.conn, query).await?.all().await?;
    if files.is_empty() {
        s.out.note("File(s) not opened.");
    }
    let show_owner = args.all || args.user.is_some();
    for file in &files {
        let mut json =
            opened_file_record(ws.as_deref(), file).n("haveRev", u64::from(file.have_rev));
        if file.locked {
            json = json.b("locked", true);
        }
        s.out.emit(json, opened_file_line(file, show_owner));
    }
    Ok(())
}
