//! A file writer that hands its data to the disk as it goes, a window at a time, instead of
//! leaving it all dirty for one final flush: a checkpoint's last `fsync` then has little left
//! to write, so it does not hold up the submits' own `fsync`s behind a burst of writeback.

use std::fs::File;
use std::io::{self, Write};

/// Writes to a file, starting writeback of each `window` bytes once written and waiting for
/// the window before it (Linux `sync_file_range`; elsewhere, plain writes).
pub(crate) struct PacedFile {
    file: File,
    /// Bytes per window; 0 leaves writeback to the operating system.
    window: u64,
    written: u64,
    /// Where the window being filled starts.
    window_start: u64,
}

impl PacedFile {
    pub(crate) fn new(file: File, window: u64) -> PacedFile {
        PacedFile {
            file,
            window,
            written: 0,
            window_start: 0,
        }
    }

    pub(crate) fn into_inner(self) -> File {
        self.file
    }

    /// A window is full: start its writeback, and wait for the previous window's.
    fn pace(&mut self) -> io::Result<()> {
        let start = self.window_start;
        let len = self.written - start;
        self.window_start = self.written;
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.file.as_raw_fd();
            let range = |offset: u64, len: u64, flags: libc::c_uint| -> io::Result<()> {
                let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
                    return Ok(());
                };
                // SAFETY: a plain system call on a descriptor this writer owns.
                if unsafe { libc::sync_file_range(fd, offset, len, flags) } == 0 {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                }
            };
            range(start, len, libc::SYNC_FILE_RANGE_WRITE)?;
            if let Some(previous) = start.checked_sub(self.window) {
                range(
                    previous,
                    self.window,
                    libc::SYNC_FILE_RANGE_WAIT_BEFORE
                        | libc::SYNC_FILE_RANGE_WRITE
                        | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                )?;
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (start, len);
        Ok(())
    }
}

impl Write for PacedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.window > 0 && self.written - self.window_start >= self.window {
            self.pace()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn paced_writes_keep_every_byte_in_order() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("paced");
        let mut out = PacedFile::new(File::create(&path).expect("file created"), 4096);
        let data: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        for chunk in data.chunks(1000) {
            out.write_all(chunk).expect("written");
        }
        out.into_inner().sync_all().expect("synced");
        let mut back = Vec::new();
        File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut back))
            .expect("read back");
        assert_eq!(back, data);
    }
}
