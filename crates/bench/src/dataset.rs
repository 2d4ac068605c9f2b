//! The deterministic dataset generator: reference trees created through the real API (workspace,
//! open, streamed submit), so the server holds exactly what real submits produce.
//!
//! File `i` lives at `PREFIX/aA/bB/cC/dD/fIIIIIII.c` where `ABCD` is the decimal number of its
//! leaf directory (`i / per_dir`): a four-level tree under the prefix. Its content at revision
//! `r` depends only on the seed, `i % distinct` and `r`.

use keel_client::ops::OpenFor;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::rng::Rng;
use crate::rpc;

/// Words the content is made of: text that compresses like source code roughly does.
const WORDS: [&[u8; 8]; 16] = [
    b"fn main(",
    b"return ;",
    b" struct ",
    b"self.x  ",
    b"  if x {",
    b"} else {",
    b"let y = ",
    b"0x1f2e3d",
    b"// note\n",
    b"match v ",
    b"=> Some(",
    b"None,  \n",
    b"        ",
    b"for i in",
    b"&mut buf",
    b"Ok(())\n}",
];

/// Files per generating submit: a large tree takes a few hundred submits, and no single
/// submit's upload, commit and reply grows with the size of the tree.
pub const BATCH: u64 = 5_000;

/// The shape of a dataset.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Depot directory holding the tree, e.g. `//depot/main`.
    pub prefix: String,
    pub files: u64,
    /// Revisions per file (1 = add only; more = edits).
    pub revisions: u32,
    /// Mean file size in bytes.
    pub file_size: u64,
    /// Distinct contents per revision (files share content modulo this; deduplicated on the
    /// server, which keeps million-file trees quick to generate).
    pub distinct: u64,
    /// Files per leaf directory.
    pub per_dir: u64,
    pub seed: u64,
    /// Files per submit while generating.
    pub batch: u64,
}

/// What generating a dataset did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Generated {
    pub files: u64,
    pub revisions: u64,
    pub bytes: u64,
    pub changes: u64,
    pub elapsed: Duration,
}

impl Shape {
    /// The browse / lockjam tree: many small files with three revisions.
    pub fn browse(files: u64, seed: u64) -> Shape {
        Shape {
            prefix: "//depot/main".into(),
            files,
            revisions: 3,
            file_size: 256,
            distinct: 1000,
            per_dir: 100,
            seed,
            batch: BATCH,
        }
    }

    /// The branchsubmit source: `files` source files, one revision each, all distinct.
    pub fn branchsubmit(files: u64, seed: u64) -> Shape {
        Shape {
            prefix: "//depot/main".into(),
            files,
            revisions: 1,
            file_size: 2048,
            distinct: files.max(1),
            per_dir: 100,
            seed,
            batch: BATCH,
        }
    }

    /// A sync tree: `files` distinct files of mean size `file_size`.
    pub fn sync(files: u64, file_size: u64, seed: u64) -> Shape {
        let batch = (256 << 20) / file_size.max(1);
        Shape {
            prefix: "//depot/sync".into(),
            files,
            revisions: 1,
            file_size,
            distinct: files.max(1),
            per_dir: 100,
            seed,
            batch: batch.clamp(16, BATCH),
        }
    }

    /// The path of file `i` below the prefix.
    pub fn rel_path(&self, i: u64) -> String {
        let leaf = i / self.per_dir.max(1);
        format!(
            "a{}/b{}/c{}/d{}/f{i:07}.c",
            leaf / 1000,
            leaf / 100 % 10,
            leaf / 10 % 10,
            leaf % 10
        )
    }

    /// The depot path of file `i`.
    pub fn depot_path(&self, i: u64) -> String {
        format!("{}/{}", self.prefix, self.rel_path(i))
    }

    /// The `Dirs` patterns a user drills through to reach file `i`, top down (five levels).
    pub fn drill(&self, i: u64) -> Vec<String> {
        let rel = self.rel_path(i);
        let parts: Vec<&str> = rel.split('/').collect();
        let parent = self.prefix.rsplit_once('/').map_or("/", |(p, _)| p);
        let mut out = vec![format!("{parent}/*"), format!("{}/*", self.prefix)];
        let mut dir = self.prefix.clone();
        // The leaf directory holds only files: the drill ends at its parent's listing.
        for part in &parts[..parts.len() - 2] {
            dir = format!("{dir}/{part}");
            out.push(format!("{dir}/*"));
        }
        out
    }

    /// Number of top-level (`aN`) directories.
    pub fn top_dirs(&self) -> u64 {
        let leaves = self.files.div_ceil(self.per_dir.max(1));
        leaves.div_ceil(1000).max(1)
    }

    /// Number of second-level directories under top-level `a`.
    pub fn second_dirs(&self, a: u64) -> u64 {
        let leaves = self.files.div_ceil(self.per_dir.max(1));
        let in_a = leaves.saturating_sub(a * 1000).min(1000);
        in_a.div_ceil(100).max(1)
    }

    /// The size of file `i` at revision `rev`.
    pub fn size(&self, i: u64, rev: u32) -> u64 {
        let mut rng = self.content_rng(i, rev);
        self.file_size / 2 + rng.below(self.file_size + 1)
    }

    /// Total bytes of the head revisions of files `range`.
    pub fn head_bytes(&self, range: std::ops::Range<u64>) -> u64 {
        range.map(|i| self.size(i, self.revisions)).sum()
    }

    /// The content of file `i` at revision `rev` (1-based).
    pub fn content(&self, i: u64, rev: u32) -> Vec<u8> {
        let mut rng = self.content_rng(i, rev);
        let size = (self.file_size / 2 + rng.below(self.file_size + 1)) as usize;
        let mut out = Vec::with_capacity(size + 8);
        let header = format!("// {} rev {rev}\n", i % self.distinct.max(1));
        out.extend_from_slice(header.as_bytes());
        while out.len() < size {
            let r = rng.next_u64();
            for shift in [0, 4, 8, 12, 16, 20, 24, 28] {
                out.extend_from_slice(WORDS[((r >> shift) & 15) as usize]);
            }
        }
        out.truncate(size);
        out
    }

    fn content_rng(&self, i: u64, rev: u32) -> Rng {
        Rng::derive(self.seed, (i % self.distinct.max(1)) * 64 + u64::from(rev))
    }

    /// The file index named by a depot path of this shape.
    pub fn index_of(&self, depot_file: &str) -> Option<u64> {
        let name = depot_file.rsplit('/').next()?;
        name.strip_prefix('f')?.strip_suffix(".c")?.parse().ok()
    }
}

/// Creates the dataset through the API: `workers` parallel writers, each with its own
/// workspace, submitting batches of added files and then batches of edits per revision.
pub async fn generate(addr: &str, shape: &Shape, workers: u64) -> Result<Generated> {
    let start = Instant::now();
    let workers = workers.max(1);
    let mut tasks = Vec::new();
    for w in 0..workers {
        let addr = addr.to_string();
        let shape = shape.clone();
        tasks.push(tokio::spawn(async move {
            generate_part(&addr, &shape, w, workers).await
        }));
    }
    let mut total = Generated::default();
    for task in tasks {
        let part = task
            .await
            .map_err(|e| crate::BenchError::Check(format!("generator task failed: {e}")))??;
        total.files += part.files;
        total.revisions += part.revisions;
        total.bytes += part.bytes;
        total.changes += part.changes;
    }
    total.elapsed = start.elapsed();
    Ok(total)
}

/// One writer's share: the batches `b` with `b % workers == worker`.
async fn generate_part(addr: &str, shape: &Shape, worker: u64, workers: u64) -> Result<Generated> {
    let ws = format!(
        "bench-gen-{}-{worker}",
        shape.prefix.trim_start_matches("//").replace('/', "-")
    );
    let conn = rpc::connect(addr, "bench-gen", &ws).await?;
    let root = std::env::temp_dir().join(&ws);
    rpc::save_workspace(
        &conn,
        &ws,
        &root,
        vec![format!("{}/... //{ws}/...", shape.prefix)],
    )
    .await?;
    let mut done = Generated::default();
    let batch = shape.batch.max(1);
    let batches = shape.files.div_ceil(batch);
    for rev in 1..=shape.revisions {
        for b in (0..batches).filter(|b| b % workers == worker) {
            let range = b * batch..((b + 1) * batch).min(shape.files);
            let files: Vec<String> = range
                .clone()
                .map(|i| format!("//{ws}/{}", shape.rel_path(i)))
                .collect();
            let action = if rev == 1 {
                OpenFor::Add
            } else {
                OpenFor::Edit
            };
            rpc::open(&conn, action, files).await?;
            let uploads: Vec<String> = range.clone().map(|i| shape.depot_path(i)).collect();
            let content_shape = shape.clone();
            let description = format!("bench dataset {} rev {rev} batch {b}", shape.prefix);
            let (_, n) = rpc::submit(&conn, &description, uploads, move |depot_file| {
                let i = content_shape.index_of(depot_file).unwrap_or(0);
                content_shape.content(i, rev)
            })
            .await?;
            done.revisions += n;
            done.changes += 1;
            done.bytes += range.clone().map(|i| shape.size(i, rev)).sum::<u64>();
            if rev == 1 {
                done.files += n;
            }
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_content_are_deterministic() {
        let shape = Shape::browse(1_000_000, 1);
        assert_eq!(shape.rel_path(123_456), "a1/b2/c3/d4/f0123456.c");
        assert_eq!(shape.index_of(&shape.depot_path(123_456)), Some(123_456));
        assert_eq!(shape.drill(5).len(), 5);
        assert_eq!(shape.drill(5)[0], "//depot/*");
        assert_eq!(shape.drill(5)[4], "//depot/main/a0/b0/c0/*");
        assert_eq!(shape.top_dirs(), 10);
        assert_eq!(shape.content(7, 2), shape.content(7, 2));
        assert_ne!(shape.content(7, 2), shape.content(7, 3));
        assert_eq!(shape.content(7, 1).len() as u64, shape.size(7, 1));
        assert_eq!(Shape::browse(300, 1).top_dirs(), 1);
    }
}
