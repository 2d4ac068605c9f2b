//! The order of client files in the workspace caches (`.keel-state`, `.keel-have`): path by
//! path component, each compared bytewise — the order a depth-first walk visiting each
//! directory's names sorted bytewise meets the files in. So a scan walking the tree finds each
//! file at the position after the previous one, and a lookup is one comparison, not a search.

use std::cmp::Ordering;

/// Compares two client files (`/`-separated) component by component: `/` sorts before every
/// other byte, so `a/x` < `a.c` < `ab`.
pub fn cmp(a: &[u8], b: &[u8]) -> Ordering {
    let at = a.iter().zip(b).position(|(x, y)| x != y);
    match at {
        None => a.len().cmp(&b.len()),
        Some(i) => rank(a[i]).cmp(&rank(b[i])),
    }
}

fn rank(byte: u8) -> u8 {
    if byte == b'/' { 0 } else { byte }
}

/// The position of `key` among `len` keys sorted by [`cmp`] (`key_at(i)` the i-th), trying
/// `*hint` first; on a hit the hint moves past it, so keys looked up in order cost one
/// comparison each.
pub fn find<'a>(
    len: usize,
    key_at: impl Fn(usize) -> &'a [u8],
    key: &[u8],
    hint: &mut usize,
) -> Option<usize> {
    if *hint < len && key_at(*hint) == key {
        *hint += 1;
        return Some(*hint - 1);
    }
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match cmp(key_at(mid), key) {
            Ordering::Less => lo = mid + 1,
            Ordering::Greater => hi = mid,
            Ordering::Equal => {
                *hint = mid + 1;
                return Some(mid);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_sorts_first_so_a_sorted_walk_meets_files_in_order() {
        let mut paths = vec!["ab", "a.c", "a/x", "a/b/c", "a-b", "a/b.c", "b", "a"];
        paths.sort_by(|a, b| cmp(a.as_bytes(), b.as_bytes()));
        assert_eq!(
            paths,
            ["a", "a/b/c", "a/b.c", "a/x", "a-b", "a.c", "ab", "b"]
        );
    }

    #[test]
    fn find_uses_the_hint_and_falls_back_to_a_search() {
        let keys = ["a/b", "a/c", "b", "c/d"];
        let at = |i: usize| keys[i].as_bytes();
        let mut hint = 0;
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(find(keys.len(), at, k.as_bytes(), &mut hint), Some(i));
            assert_eq!(hint, i + 1);
        }
        assert_eq!(find(keys.len(), at, b"a/c", &mut hint), Some(1));
        assert_eq!(hint, 2);
        assert_eq!(find(keys.len(), at, b"a/bb", &mut hint), None);
        assert_eq!(find(0, at, b"a", &mut hint), None);
    }
}
