//! The type signature: the sequence of basic types in the packed stream, ignoring
//! where they sit in memory. Kept as a tree of runs (`n` consecutive elements of one
//! basic type) so that uniform types are one run whatever their count.

use crate::basic::Basic;
use crate::layout::prefix_sums;
use std::sync::Arc;

/// Sequences longer than this stay one part when concatenated (see `layout`).
const FLATTEN_LIMIT: usize = 16;

#[derive(Clone, Debug)]
pub(crate) enum Sig {
    Empty,
    Run {
        basic: Basic,
        n: u64,
    },
    Repeat {
        count: u64,
        child: Arc<Sig>,
        child_size: u64,
        child_elements: u64,
    },
    /// Parts in stream order; `starts` are packed byte offsets, `element_starts` counts
    /// of basic elements before each part (both end with the total).
    Seq {
        parts: Arc<[Sig]>,
        starts: Arc<[u64]>,
        element_starts: Arc<[u64]>,
    },
}

impl Sig {
    pub(crate) fn run(basic: Basic, n: u64) -> Sig {
        if n == 0 {
            Sig::Empty
        } else {
            Sig::Run { basic, n }
        }
    }

    pub(crate) fn size(&self) -> u64 {
        match self {
            Sig::Empty => 0,
            Sig::Run { basic, n } => basic.size() * n,
            Sig::Repeat {
                count, child_size, ..
            } => count * child_size,
            Sig::Seq { starts, .. } => starts[starts.len() - 1],
        }
    }

    /// Basic elements (pairs count two), as MPI_Get_elements counts them.
    pub(crate) fn elements(&self) -> u64 {
        match self {
            Sig::Empty => 0,
            Sig::Run { basic, n } => basic.element_count() * n,
            Sig::Repeat {
                count,
                child_elements,
                ..
            } => count * child_elements,
            Sig::Seq { element_starts, .. } => element_starts[element_starts.len() - 1],
        }
    }

    /// The one basic type every element has, if there is one.
    pub(crate) fn uniform(&self) -> Option<Basic> {
        match self {
            Sig::Empty => None,
            Sig::Run { basic, .. } => Some(*basic),
            Sig::Repeat { child, .. } => child.uniform(),
            Sig::Seq { parts, .. } => {
                let first = parts[0].uniform()?;
                parts[1..]
                    .iter()
                    .all(|p| p.uniform() == Some(first))
                    .then_some(first)
            }
        }
    }

    pub(crate) fn repeat(&self, count: u64) -> Sig {
        if count == 0 {
            return Sig::Empty;
        }
        match self {
            Sig::Empty => Sig::Empty,
            _ if count == 1 => self.clone(),
            Sig::Run { basic, n } => Sig::Run {
                basic: *basic,
                n: n * count,
            },
            Sig::Repeat {
                count: inner,
                child,
                child_size,
                child_elements,
            } => Sig::Repeat {
                count: inner * count,
                child: child.clone(),
                child_size: *child_size,
                child_elements: *child_elements,
            },
            Sig::Seq { .. } => Sig::Repeat {
                count,
                child: Arc::new(self.clone()),
                child_size: self.size(),
                child_elements: self.elements(),
            },
        }
    }

    pub(crate) fn concat(parts: Vec<Sig>) -> Sig {
        let mut merged: Vec<Sig> = Vec::with_capacity(parts.len());
        for part in parts {
            match (merged.last_mut(), part) {
                (_, Sig::Empty) => {}
                (Some(Sig::Run { basic, n }), Sig::Run { basic: b, n: m }) if *basic == b => {
                    *n += m
                }
                (_, Sig::Seq { parts, .. }) if parts.len() <= FLATTEN_LIMIT => {
                    merged.extend(parts.iter().cloned())
                }
                (_, part) => merged.push(part),
            }
        }
        match merged.len() {
            0 => Sig::Empty,
            1 => merged.pop().unwrap_or(Sig::Empty),
            _ => Sig::Seq {
                starts: prefix_sums(merged.iter().map(Sig::size)),
                element_starts: prefix_sums(merged.iter().map(Sig::elements)),
                parts: merged.into(),
            },
        }
    }

    /// Basic elements in the first `bytes` bytes of the stream; None if `bytes` ends
    /// inside a basic element (or beyond the end).
    pub(crate) fn elements_in(&self, bytes: u64) -> Option<u64> {
        match self {
            Sig::Empty => (bytes == 0).then_some(0),
            Sig::Run { basic, n } => {
                let size = basic.size();
                let (whole, rest) = (bytes / size, bytes % size);
                if whole > *n || (whole == *n && rest > 0) {
                    return None;
                }
                let partial = match (rest, basic.pair_members()) {
                    (0, _) => 0,
                    (r, Some((value, _))) if r == value.size() => 1,
                    _ => return None,
                };
                Some(whole * basic.element_count() + partial)
            }
            Sig::Repeat {
                count,
                child,
                child_size,
                child_elements,
            } => {
                let (whole, rest) = (bytes / child_size, bytes % child_size);
                if whole > *count || (whole == *count && rest > 0) {
                    return None;
                }
                Some(whole * child_elements + child.elements_in(rest)?)
            }
            Sig::Seq {
                parts,
                starts,
                element_starts,
            } => {
                let i = starts.partition_point(|&s| s <= bytes) - 1;
                if i == parts.len() {
                    return (bytes == starts[i]).then(|| element_starts[i]);
                }
                Some(element_starts[i] + parts[i].elements_in(bytes - starts[i])?)
            }
        }
    }

    /// Runs of (basic type, element count) in stream order, without expanding runs.
    pub(crate) fn runs(&self) -> Runs<'_> {
        Runs {
            stack: vec![Frame::Node(self)],
        }
    }
}

enum Frame<'a> {
    Node(&'a Sig),
    Repeat { child: &'a Sig, left: u64 },
    Seq { parts: &'a [Sig], next: usize },
}

pub(crate) struct Runs<'a> {
    stack: Vec<Frame<'a>>,
}

impl<'a> Iterator for Runs<'a> {
    type Item = (Basic, u64);

    fn next(&mut self) -> Option<(Basic, u64)> {
        loop {
            let top = self.stack.last_mut()?;
            let descend: &'a Sig = match top {
                Frame::Node(sig) => {
                    let sig: &'a Sig = sig;
                    self.stack.pop();
                    match sig {
                        Sig::Empty => continue,
                        Sig::Run { basic, n } => return Some((*basic, *n)),
                        Sig::Repeat { count, child, .. } => {
                            self.stack.push(Frame::Repeat {
                                child,
                                left: *count,
                            });
                            continue;
                        }
                        Sig::Seq { parts, .. } => {
                            self.stack.push(Frame::Seq { parts, next: 0 });
                            continue;
                        }
                    }
                }
                Frame::Repeat { child, left } => {
                    if *left == 0 {
                        self.stack.pop();
                        continue;
                    }
                    *left -= 1;
                    child
                }
                Frame::Seq { parts, next } => {
                    let Some(part) = parts.get(*next) else {
                        self.stack.pop();
                        continue;
                    };
                    *next += 1;
                    part
                }
            };
            self.stack.push(Frame::Node(descend));
        }
    }
}
