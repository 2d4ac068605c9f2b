//! Times as the logs write them: RFC 3339 UTC with milliseconds.

use keel_core::civil_from_days;
use std::time::SystemTime;

/// Formats times, reusing the date and time of day while the second stays the same.
#[derive(Default)]
pub(crate) struct Clock {
    second: Option<u64>,
    /// `2026-11-25T12:34:56.` for `second`.
    prefix: String,
    text: String,
}

impl Clock {
    /// `time` as RFC 3339 UTC with milliseconds (`2026-11-25T12:34:56.789Z`).
    pub(crate) fn format(&mut self, time: SystemTime) -> &str {
        use std::fmt::Write as _;
        let since = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let secs = since.as_secs();
        if self.second != Some(secs) {
            let (days, rem) = (secs / 86_400, secs % 86_400);
            let (y, m, d) = civil_from_days(days as i64);
            self.prefix = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.",
                rem / 3600,
                rem % 3600 / 60,
                rem % 60
            );
            self.second = Some(secs);
        }
        self.text.clear();
        self.text.push_str(&self.prefix);
        let _ = write!(self.text, "{:03}Z", since.subsec_millis());
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;
    use std::time::{Duration, SystemTime};

    #[test]
    fn times_are_rfc3339_utc() {
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400_123, "2000-02-29T00:00:00.123Z"),
            (1_764_073_696_789, "2025-11-25T12:28:16.789Z"),
            (1_764_073_696_790, "2025-11-25T12:28:16.790Z"),
        ];
        let mut clock = Clock::default();
        for (millis, want) in cases {
            let t = SystemTime::UNIX_EPOCH + Duration::from_millis(millis);
            assert_eq!(clock.format(t), want);
        }
    }
}
