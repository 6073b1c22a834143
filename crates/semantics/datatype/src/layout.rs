//! The compiled memory layout of a datatype: where the bytes of its packed stream live,
//! as a small tree built once at construction. Adjacent bytes are merged into blocks,
//! regular repetitions stay loops (`Repeat`), and irregular lists keep the packed
//! offset of each entry so that a pack starting at any stream offset finds its place
//! by arithmetic or binary search, never by scanning from the beginning.

use std::sync::Arc;

/// Block lists longer than this stay one part when concatenated instead of being copied
/// into the new list: an indexed type of indexed types would otherwise hold the product
/// of both lengths.
const FLATTEN_LIMIT: usize = 16;

/// One contiguous run of bytes: (displacement in bytes, length).
pub(crate) type Run = (i64, u64);

#[derive(Clone, Debug)]
pub(crate) enum Node {
    Empty,
    /// `len` contiguous bytes at `disp`.
    Block {
        disp: i64,
        len: u64,
    },
    /// `count` copies of `child`, copy k shifted by `disp + k * stride`.
    Repeat {
        disp: i64,
        count: u64,
        stride: i64,
        child: Arc<Node>,
        child_size: u64,
    },
    /// Irregular blocks in stream order, shifted by `disp`; `starts[i]` is the packed
    /// offset of block i and `starts[n]` the total size.
    Blocks {
        disp: i64,
        runs: Arc<[Run]>,
        starts: Arc<[u64]>,
    },
    /// Sub-layouts in stream order, shifted by `disp`; `starts` as for `Blocks`.
    Seq {
        disp: i64,
        parts: Arc<[Node]>,
        starts: Arc<[u64]>,
    },
}

impl Node {
    pub(crate) fn block(disp: i64, len: u64) -> Node {
        if len == 0 {
            Node::Empty
        } else {
            Node::Block { disp, len }
        }
    }

    /// Bytes of data.
    pub(crate) fn size(&self) -> u64 {
        match self {
            Node::Empty => 0,
            Node::Block { len, .. } => *len,
            Node::Repeat {
                count, child_size, ..
            } => count * child_size,
            Node::Blocks { starts, .. } | Node::Seq { starts, .. } => starts[starts.len() - 1],
        }
    }

    /// The same layout moved by `delta` bytes.
    pub(crate) fn shifted(&self, delta: i64) -> Node {
        let mut node = self.clone();
        match &mut node {
            Node::Empty => {}
            Node::Block { disp, .. }
            | Node::Repeat { disp, .. }
            | Node::Blocks { disp, .. }
            | Node::Seq { disp, .. } => *disp += delta,
        }
        node
    }

    /// `count` (at least 2) copies of `self`, copy k shifted by `k * stride`: merged
    /// where the copies touch, else a loop over `self`.
    fn repetition(&self, count: u64, stride: i64) -> Repetition<'_> {
        match self {
            Node::Block { disp, len } if stride == *len as i64 => Repetition::Block {
                disp: *disp,
                len: len * count,
            },
            // A loop whose copies continue the inner loop's regular step is one longer loop.
            Node::Repeat {
                disp,
                count: inner,
                stride: inner_stride,
                child,
                child_size,
            } if *inner_stride * *inner as i64 == stride => Repetition::Longer {
                disp: *disp,
                count: inner * count,
                stride: *inner_stride,
                child,
                child_size: *child_size,
            },
            _ => Repetition::Loop,
        }
    }

    /// `count` copies of `self`, copy k shifted by `k * stride`, merged where the copies touch.
    pub(crate) fn repeat(&self, count: u64, stride: i64) -> Node {
        let size = self.size();
        if count == 0 || size == 0 {
            return Node::Empty;
        }
        if count == 1 {
            return self.clone();
        }
        match self.repetition(count, stride) {
            Repetition::Block { disp, len } => Node::Block { disp, len },
            Repetition::Longer {
                disp,
                count,
                stride,
                child,
                child_size,
            } => Node::Repeat {
                disp,
                count,
                stride,
                child: child.clone(),
                child_size,
            },
            Repetition::Loop => Node::Repeat {
                disp: 0,
                count,
                stride,
                child: Arc::new(self.clone()),
                child_size: size,
            },
        }
    }

    /// The layouts of `parts` one after the other in the packed stream.
    pub(crate) fn concat(parts: Vec<Node>) -> Node {
        let parts: Vec<Node> = parts
            .into_iter()
            .filter(|p| !matches!(p, Node::Empty))
            .collect();
        let mut runs = Vec::new();
        if parts.iter().all(|p| p.collect_runs(&mut runs)) {
            return Node::from_runs(runs);
        }
        // Mixed: keep sub-layouts, but gather consecutive plain blocks into one list.
        let mut merged: Vec<Node> = Vec::with_capacity(parts.len());
        let mut pending: Vec<Run> = Vec::new();
        for part in parts {
            if !part.collect_runs(&mut pending) {
                if !pending.is_empty() {
                    merged.push(Node::from_runs(std::mem::take(&mut pending)));
                }
                merged.push(part);
            }
        }
        if !pending.is_empty() {
            merged.push(Node::from_runs(pending));
        }
        if merged.len() == 1 {
            return merged.pop().unwrap_or(Node::Empty);
        }
        let starts = prefix_sums(merged.iter().map(Node::size));
        Node::Seq {
            disp: 0,
            parts: merged.into(),
            starts,
        }
    }

    /// Appends this layout's runs if it is a plain list of blocks (no loop worth keeping).
    fn collect_runs(&self, runs: &mut Vec<Run>) -> bool {
        match self {
            Node::Empty => true,
            Node::Block { disp, len } => {
                push_run(runs, (*disp, *len));
                true
            }
            Node::Blocks {
                disp, runs: own, ..
            } if own.len() <= FLATTEN_LIMIT => {
                for &(d, len) in own.iter() {
                    push_run(runs, (disp + d, len));
                }
                true
            }
            _ => false,
        }
    }

    /// A list of runs, merged where adjacent, recognised as a loop when regular.
    fn from_runs(mut runs: Vec<Run>) -> Node {
        runs.retain(|r| r.1 > 0);
        let mut merged: Vec<Run> = Vec::with_capacity(runs.len());
        for run in runs {
            push_run(&mut merged, run);
        }
        match merged.len() {
            0 => return Node::Empty,
            1 => return Node::block(merged[0].0, merged[0].1),
            _ => {}
        }
        let (d0, len) = merged[0];
        let stride = merged[1].0 - d0;
        let regular = merged
            .iter()
            .enumerate()
            .all(|(i, &(d, l))| l == len && d == d0 + stride * i as i64);
        if regular {
            return Node::Repeat {
                disp: d0,
                count: merged.len() as u64,
                stride,
                child: Arc::new(Node::Block { disp: 0, len }),
                child_size: len,
            };
        }
        let starts = prefix_sums(merged.iter().map(|r| r.1));
        Node::Blocks {
            disp: 0,
            runs: merged.into(),
            starts,
        }
    }

    /// Hands `sink`, in stream order, the contiguous runs holding packed bytes
    /// `[skip, ..)` of this layout placed at `base`, as addresses; the first run is cut
    /// to start at `skip`. Stops once the sink has nothing left to move.
    pub(crate) fn walk<R: RunSink>(&self, base: i64, skip: u64, sink: &mut R) {
        match self {
            Node::Empty => {}
            Node::Block { disp, len } => {
                if skip < *len {
                    sink.run(base + disp + skip as i64, len - skip);
                }
            }
            Node::Repeat {
                disp,
                count,
                stride,
                child,
                child_size,
            } => child.walk_loop(base + disp, *count, *stride, *child_size, skip, sink),
            Node::Blocks { disp, runs, starts } => {
                let first = Node::find(starts, skip);
                let mut inner_skip = skip - starts[first];
                for &(d, len) in &runs[first..] {
                    if sink.remaining() == 0 {
                        return;
                    }
                    sink.run(base + disp + d + inner_skip as i64, len - inner_skip);
                    inner_skip = 0;
                }
            }
            Node::Seq {
                disp,
                parts,
                starts,
            } => {
                let first = Node::find(starts, skip);
                let mut inner_skip = skip - starts[first];
                for part in &parts[first..] {
                    if sink.remaining() == 0 {
                        return;
                    }
                    part.walk(base + disp, inner_skip, sink);
                    inner_skip = 0;
                }
            }
        }
    }

    /// Walks `count` copies of `self` (each `size` bytes of data), copy k at
    /// `base + k * stride`, as `walk` on the loop of them.
    fn walk_loop<R: RunSink>(
        &self,
        base: i64,
        count: u64,
        stride: i64,
        size: u64,
        skip: u64,
        sink: &mut R,
    ) {
        let mut k = skip / size;
        let mut inner_skip = skip % size;
        let at = |k: u64| base + k as i64 * stride;
        if let Node::Block { disp: cd, len } = *self {
            // The common strided case: whole blocks in one loop of the sink, the
            // cut first and last blocks on their own.
            if inner_skip > 0 {
                sink.run(at(k) + cd + inner_skip as i64, len - inner_skip);
                k += 1;
            }
            let whole = (count - k).min(sink.remaining() / len);
            if whole > 0 {
                sink.strided(at(k) + cd, stride, len, whole);
                k += whole;
            }
            if k < count && sink.remaining() > 0 {
                sink.run(at(k) + cd, len);
            }
            return;
        }
        if let Node::Blocks { disp: cd, runs, .. } = self {
            // Elements of a struct or indexed type: the same runs at each step,
            // without a search per element.
            if inner_skip > 0 {
                self.walk(at(k), inner_skip, sink);
                k += 1;
            }
            while k < count && sink.remaining() > 0 {
                let element = at(k) + cd;
                for &(d, len) in runs.iter() {
                    sink.run(element + d, len);
                }
                k += 1;
            }
            return;
        }
        while k < count && sink.remaining() > 0 {
            self.walk(at(k), inner_skip, sink);
            inner_skip = 0;
            k += 1;
        }
    }

    /// Walks `count` elements of a type with this layout and extent `stride`, as `walk`
    /// on `self.repeat(count, stride)` but without building that node: a pack call
    /// allocates nothing.
    pub(crate) fn walk_repeated<R: RunSink>(
        &self,
        count: u64,
        stride: i64,
        base: i64,
        skip: u64,
        sink: &mut R,
    ) {
        if count == 1 {
            return self.walk(base, skip, sink);
        }
        match self.repetition(count, stride) {
            Repetition::Block { disp, len } => Node::Block { disp, len }.walk(base, skip, sink),
            Repetition::Longer {
                disp,
                count,
                stride,
                child,
                child_size,
            } => child.walk_loop(base + disp, count, stride, child_size, skip, sink),
            Repetition::Loop => self.walk_loop(base, count, stride, self.size(), skip, sink),
        }
    }

    /// The item holding stream offset `skip`, given the items' `starts`; offset 0 (every
    /// element after the first of a repetition) needs no search.
    fn find(starts: &[u64], skip: u64) -> usize {
        if skip == 0 {
            0
        } else {
            starts.partition_point(|&s| s <= skip) - 1
        }
    }
}

/// How copies of a layout at a regular step are laid out (see `Node::repetition`).
enum Repetition<'a> {
    /// Copies of a block that touch: one longer block.
    Block { disp: i64, len: u64 },
    /// Copies of a loop that continue its step: one longer loop over its child.
    Longer {
        disp: i64,
        count: u64,
        stride: i64,
        child: &'a Arc<Node>,
        child_size: u64,
    },
    /// Anything else: a loop over the whole layout.
    Loop,
}

/// What a layout walk feeds: moves the bytes of the runs it is given, in stream order,
/// until its range of the stream is complete.
pub(crate) trait RunSink {
    /// Stream bytes still to move.
    fn remaining(&self) -> u64;
    /// Moves the first `min(len, remaining)` bytes of the run at address `at`.
    fn run(&mut self, at: i64, len: u64);
    /// Moves `count` whole runs of `len` bytes at `at + k * stride`; the caller has
    /// checked that `count * len <= remaining`.
    fn strided(&mut self, at: i64, stride: i64, len: u64, count: u64);
}

fn push_run(runs: &mut Vec<Run>, run: Run) {
    if run.1 == 0 {
        return;
    }
    if let Some(last) = runs.last_mut() {
        if last.0 + last.1 as i64 == run.0 {
            last.1 += run.1;
            return;
        }
    }
    runs.push(run);
}

/// `[0, a, a+b, ...]`: the start of each item and, last, the total.
pub(crate) fn prefix_sums(sizes: impl Iterator<Item = u64>) -> Arc<[u64]> {
    let mut total = 0;
    let mut starts = vec![0];
    for size in sizes {
        total += size;
        starts.push(total);
    }
    starts.into()
}
