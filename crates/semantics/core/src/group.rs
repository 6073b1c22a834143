//! Group algebra (`MPI_Group_*`): pure functions on ordered sets of world ranks.

use crate::comm::{Group, UNDEFINED};
use crate::error::{ErrorClass, MpiError, MpiResult};
use std::sync::Arc;

/// Result of comparing two groups or communicators (the ABI maps it to `MPI_IDENT`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Similarity {
    Ident,
    Congruent,
    Similar,
    Unequal,
}

/// `MPI_Group_compare`: same members in the same order, same members, or different.
pub fn compare(a: &Group, b: &Group) -> Similarity {
    if a.members == b.members {
        return Similarity::Ident;
    }
    let sorted = |g: &Group| {
        let mut m = g.members.clone();
        m.sort_unstable();
        m
    };
    if sorted(a) == sorted(b) {
        Similarity::Similar
    } else {
        Similarity::Unequal
    }
}

fn check_rank(function: &str, arg: &str, g: &Group, r: i32) -> MpiResult<usize> {
    if r < 0 || r as usize >= g.size() {
        return Err(MpiError::arg(
            ErrorClass::Rank,
            function,
            arg,
            r,
            format!("not a rank of the {}-member group", g.size()),
        ));
    }
    Ok(r as usize)
}

/// Ranks listed must be valid and distinct.
fn check_distinct(function: &str, g: &Group, ranks: &[i32]) -> MpiResult<Vec<usize>> {
    let mut seen = vec![false; g.size()];
    let mut out = Vec::with_capacity(ranks.len());
    for &r in ranks {
        let r = check_rank(function, "ranks", g, r)?;
        if std::mem::replace(&mut seen[r], true) {
            return Err(MpiError::arg(
                ErrorClass::Rank,
                function,
                "ranks",
                r,
                "listed twice",
            ));
        }
        out.push(r);
    }
    Ok(out)
}

/// `MPI_Group_incl`.
pub fn incl(function: &str, g: &Group, ranks: &[i32]) -> MpiResult<Arc<Group>> {
    let ranks = check_distinct(function, g, ranks)?;
    Ok(Group::new(ranks.iter().map(|&r| g.members[r]).collect()))
}

/// `MPI_Group_excl`.
pub fn excl(function: &str, g: &Group, ranks: &[i32]) -> MpiResult<Arc<Group>> {
    let ranks = check_distinct(function, g, ranks)?;
    let mut keep = vec![true; g.size()];
    for r in ranks {
        keep[r] = false;
    }
    Ok(Group::new(
        g.members
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(&m, _)| m)
            .collect(),
    ))
}

/// Expands `MPI_Group_range_incl/excl` triplets (first, last, stride) into ranks.
pub fn expand_ranges(function: &str, g: &Group, ranges: &[[i32; 3]]) -> MpiResult<Vec<i32>> {
    let mut ranks = Vec::new();
    for &[first, last, stride] in ranges {
        if stride == 0 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                function,
                "ranges",
                format!("[{first}, {last}, 0]"),
                "the stride cannot be 0",
            ));
        }
        check_rank(function, "ranges", g, first)?;
        check_rank(function, "ranges", g, last)?;
        let mut r = first as i64;
        while (stride > 0 && r <= last as i64) || (stride < 0 && r >= last as i64) {
            ranks.push(r as i32);
            if ranks.len() > g.size() {
                break; // repeated ranks: check_distinct reports them
            }
            r += stride as i64;
        }
    }
    Ok(ranks)
}

/// `MPI_Group_union`: `a`'s members, then `b`'s that are not in `a`.
pub fn union(a: &Group, b: &Group) -> Arc<Group> {
    let mut m = a.members.clone();
    m.extend(b.members.iter().filter(|w| !a.members.contains(w)));
    Group::new(m)
}

/// `MPI_Group_intersection`: `a`'s members that are in `b`, in `a`'s order.
pub fn intersection(a: &Group, b: &Group) -> Arc<Group> {
    Group::new(
        a.members
            .iter()
            .copied()
            .filter(|w| b.members.contains(w))
            .collect(),
    )
}

/// `MPI_Group_difference`: `a`'s members that are not in `b`, in `a`'s order.
pub fn difference(a: &Group, b: &Group) -> Arc<Group> {
    Group::new(
        a.members
            .iter()
            .copied()
            .filter(|w| !b.members.contains(w))
            .collect(),
    )
}

/// `MPI_Group_translate_ranks`; `MPI_PROC_NULL` maps to itself.
pub fn translate(
    function: &str,
    a: &Group,
    ranks: &[i32],
    b: &Group,
    proc_null: i32,
) -> MpiResult<Vec<i32>> {
    ranks
        .iter()
        .map(|&r| {
            if r == proc_null {
                return Ok(proc_null);
            }
            let r = check_rank(function, "ranks1", a, r)?;
            Ok(b.rank_of(a.members[r])
                .map(|x| x as i32)
                .unwrap_or(UNDEFINED))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(m: &[u32]) -> Arc<Group> {
        Group::new(m.to_vec())
    }

    #[test]
    fn set_operations_keep_the_first_groups_order() {
        let a = g(&[5, 1, 3]);
        let b = g(&[3, 7, 5]);
        assert_eq!(union(&a, &b).members, vec![5, 1, 3, 7]);
        assert_eq!(intersection(&a, &b).members, vec![5, 3]);
        assert_eq!(difference(&a, &b).members, vec![1]);
        assert_eq!(compare(&a, &g(&[1, 3, 5])), Similarity::Similar);
        assert_eq!(compare(&a, &a), Similarity::Ident);
        assert_eq!(compare(&a, &b), Similarity::Unequal);
    }

    #[test]
    fn incl_excl_and_ranges() {
        let a = g(&[10, 11, 12, 13, 14, 15]);
        assert_eq!(incl("t", &a, &[4, 0]).unwrap().members, vec![14, 10]);
        assert_eq!(
            excl("t", &a, &[4, 0]).unwrap().members,
            vec![11, 12, 13, 15]
        );
        assert!(incl("t", &a, &[1, 1]).is_err());
        assert!(incl("t", &a, &[6]).is_err());
        let r = expand_ranges("t", &a, &[[5, 1, -2], [0, 0, 1]]).unwrap();
        assert_eq!(r, vec![5, 3, 1, 0]);
        assert!(expand_ranges("t", &a, &[[0, 3, 0]]).is_err());
        assert_eq!(
            translate("t", &a, &[0, 3, -1], &g(&[13, 10]), -1).unwrap(),
            vec![1, 0, -1]
        );
        assert_eq!(
            translate("t", &a, &[1], &g(&[13]), -1).unwrap(),
            vec![UNDEFINED]
        );
    }
}
