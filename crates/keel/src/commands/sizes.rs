//! `sizes [-a] [-s] [-z] [-b N] [-h] FILES`: revision sizes from the server's metadata, per
//! revision or summed per argument (`p4 sizes`).

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, SizesQuery};

use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct SizesArgs {
    /// Every revision of each file, not only the selected one.
    #[arg(short = 'a')]
    pub all: bool,
    /// One total per argument.
    #[arg(short = 's')]
    pub summary: bool,
    /// Also count blocks of this many bytes (each revision rounded up).
    #[arg(short = 'b', value_name = "BLOCKSIZE")]
    pub block_size: Option<u64>,
    /// Count each stored content once: lazy copies (branched files not changed since) add
    /// nothing.
    #[arg(short = 'z')]
    pub once: bool,
    /// Human-readable sizes (K, M, G, T).
    #[arg(short = 'H', long = "human")]
    pub human: bool,
    /// Files (default: the whole workspace).
    pub files: Vec<String>,
}

/// `bytes` as `12.1K`, `3.0M`, ... (1024-based), or plain under 1024.
fn human(bytes: u64) -> String {
    let mut value = bytes as f64;
    for unit in ["", "K", "M", "G", "T"] {
        if value < 1024.0 || unit == "T" {
            return match unit {
                "" => format!("{bytes} bytes"),
                _ => format!("{value:.1}{unit}"),
            };
        }
        value /= 1024.0;
    }
    format!("{bytes} bytes")
}

pub async fn sizes(s: &mut Session, args: SizesArgs) -> Result<()> {
    if args.block_size == Some(0) {
        bail!("-b 0: a block size must be at least 1 byte");
    }
    let files = s.file_args_or_all(&args.files).await?;
    let query = SizesQuery {
        paths: files,
        all_revisions: args.all,
        summary: args.summary,
        block_size: args.block_size,
        once: args.once,
    };
    let mut stream = ops::sizes(&s.conn, query).await?;
    while let Some(e) = stream.next().await? {
        let size = if args.human {
            human(e.bytes)
        } else {
            format!("{} bytes", e.bytes)
        };
        let blocks = match args.block_size {
            Some(_) => format!(" {} blocks", e.blocks),
            None => String::new(),
        };
        let (record, text) = if args.summary {
            (
                Record::new()
                    .s("path", &e.path)
                    .n("fileCount", e.files)
                    .n("fileSize", e.bytes),
                format!("{} {} files {size}{blocks}", e.path, e.files),
            )
        } else {
            (
                Record::new()
                    .s("depotFile", &e.path)
                    .n("rev", u64::from(e.rev))
                    .n("fileSize", e.bytes),
                format!("{}#{} {size}{blocks}", e.path, e.rev),
            )
        };
        let record = match args.block_size {
            Some(_) => record.n("blockCount", e.blocks),
            None => record,
        };
        s.out.emit(record, text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0 bytes");
        assert_eq!(human(1023), "1023 bytes");
        assert_eq!(human(1024), "1.0K");
        assert_eq!(human(1536), "1.5K");
        assert_eq!(human(5 * 1024 * 1024), "5.0M");
    }
}
