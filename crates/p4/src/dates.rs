//! Dates as P4 clients show them: `YYYY/MM/DD HH:MM:SS` in UTC (the server's zone is UTC),
//! `YYYY/MM/DD` alone, and uptime as `HH:MM:SS`.

use keel_core::calendar::civil_from_days;

/// `2026/11/28 12:34:56`.
pub fn date_time(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}/{m:02}/{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// `2026/11/28`.
pub fn date(unix: i64) -> String {
    let (y, m, d) = civil_from_days(unix.div_euclid(86_400));
    format!("{y:04}/{m:02}/{d:02}")
}

/// `01:02:03` (hours grow past 99 as needed).
pub fn uptime(secs: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_clients_show_dates() {
        assert_eq!(date_time(0), "1970/01/01 00:00:00");
        assert_eq!(date_time(1_795_869_296), "2026/11/28 12:34:56");
        assert_eq!(date(1_795_869_296), "2026/11/28");
        assert_eq!(uptime(3723), "01:02:03");
    }
}
