//! A typemap under construction: size, bounds, alignment, layout and signature, with
//! the rules of the standard for combining them (lower and upper bound markers, set by
//! `resized` or by the MPI-1 marker types `MPI_LB`/`MPI_UB`, are sticky, each on its
//! own; a structure's extent is padded to its most aligned member unless it has an
//! upper bound marker).
//! Every operation checks for overflow and returns None when a value leaves `i64`.

use crate::basic::Basic;
use crate::layout::Node;
use crate::signature::Sig;

#[derive(Clone, Debug)]
pub(crate) struct Fragment {
    pub(crate) size: u64,
    /// Whether the typemap has entries or markers: only then do `lb`/`ub` mean anything.
    pub(crate) bounded: bool,
    pub(crate) lb: i64,
    pub(crate) ub: i64,
    /// `lb` / `ub` come from markers (`resized`, `MPI_LB` / `MPI_UB`), which win over
    /// the data's bounds wherever the typemap goes.
    pub(crate) explicit_lb: bool,
    pub(crate) explicit_ub: bool,
    /// Bounds of the data itself; meaningful when `size > 0`.
    pub(crate) true_lb: i64,
    pub(crate) true_ub: i64,
    pub(crate) align: u64,
    pub(crate) layout: Node,
    pub(crate) sig: Sig,
}

fn to_i64(v: i128) -> Option<i64> {
    i64::try_from(v).ok()
}

impl Fragment {
    pub(crate) fn basic(b: Basic) -> Fragment {
        let (layout, true_ub) = match (b.pair_members(), b.pair_index_offset()) {
            (Some((value, index)), Some(offset)) => (
                Node::concat(vec![
                    Node::block(0, value.size()),
                    Node::block(offset as i64, index.size()),
                ]),
                (offset + index.size()) as i64,
            ),
            _ => (Node::block(0, b.size()), b.size() as i64),
        };
        Fragment {
            size: b.size(),
            bounded: true,
            lb: 0,
            ub: b.extent() as i64,
            explicit_lb: false,
            explicit_ub: false,
            true_lb: 0,
            true_ub,
            align: b.alignment(),
            layout,
            sig: Sig::run(b, 1),
        }
    }

    fn empty(align: u64) -> Fragment {
        Fragment {
            size: 0,
            bounded: false,
            lb: 0,
            ub: 0,
            explicit_lb: false,
            explicit_ub: false,
            true_lb: 0,
            true_ub: 0,
            align,
            layout: Node::Empty,
            sig: Sig::Empty,
        }
    }

    pub(crate) fn extent(&self) -> i64 {
        if self.bounded {
            self.ub - self.lb
        } else {
            0
        }
    }

    /// `count` copies, copy k displaced by `k * stride` bytes.
    pub(crate) fn repeat(&self, count: u64, stride: i64) -> Option<Fragment> {
        if count == 0 {
            return Some(Fragment::empty(self.align));
        }
        let size = self.size.checked_mul(count)?;
        i64::try_from(size).ok()?;
        let span = (count as i128 - 1) * stride as i128;
        let (lo, hi) = (span.min(0), span.max(0));
        Some(Fragment {
            size,
            bounded: self.bounded,
            lb: to_i64(self.lb as i128 + lo)?,
            ub: to_i64(self.ub as i128 + hi)?,
            explicit_lb: self.explicit_lb,
            explicit_ub: self.explicit_ub,
            true_lb: to_i64(self.true_lb as i128 + lo)?,
            true_ub: to_i64(self.true_ub as i128 + hi)?,
            align: self.align,
            layout: self.layout.repeat(count, stride),
            sig: self.sig.repeat(count),
        })
    }

    /// The same typemap displaced by `disp` bytes.
    pub(crate) fn shift(&self, disp: i64) -> Option<Fragment> {
        Some(Fragment {
            lb: self.lb.checked_add(disp)?,
            ub: self.ub.checked_add(disp)?,
            true_lb: self.true_lb.checked_add(disp)?,
            true_ub: self.true_ub.checked_add(disp)?,
            layout: self.layout.shifted(disp),
            ..self.clone()
        })
    }

    /// The typemaps one after the other in the stream. `pad` applies the alignment
    /// padding of MPI_Type_create_struct when no part carries an upper bound marker.
    pub(crate) fn concat(parts: Vec<Fragment>, pad: bool) -> Option<Fragment> {
        let mut size: u64 = 0;
        for p in &parts {
            size = size.checked_add(p.size)?;
        }
        i64::try_from(size).ok()?;
        let explicit_lb = parts.iter().any(|p| p.explicit_lb);
        let explicit_ub = parts.iter().any(|p| p.explicit_ub);
        // A bound comes from the parts with its marker if any has one, else from all.
        let sets = |marked: bool, own: bool, p: &Fragment| if marked { own } else { p.bounded };
        let lb = parts
            .iter()
            .filter(|p| sets(explicit_lb, p.explicit_lb, p))
            .map(|p| p.lb);
        let ub = parts
            .iter()
            .filter(|p| sets(explicit_ub, p.explicit_ub, p))
            .map(|p| p.ub);
        let (lb, ub) = (lb.min(), ub.max());
        let has_data = |p: &&Fragment| p.size > 0;
        let true_lb = parts.iter().filter(has_data).map(|p| p.true_lb).min();
        let true_ub = parts.iter().filter(has_data).map(|p| p.true_ub).max();
        let align = parts.iter().map(|p| p.align).max().unwrap_or(1);
        let (bounded, lb, mut ub) = match (lb, ub) {
            (Some(lb), Some(ub)) => (true, lb, ub),
            _ => (false, 0, 0),
        };
        if pad && bounded && !explicit_ub {
            let extent = ub as i128 - lb as i128;
            let padding = (align as i128 - extent.rem_euclid(align as i128)) % align as i128;
            ub = to_i64(ub as i128 + padding)?;
        }
        to_i64(ub as i128 - lb as i128)?;
        let (layouts, sigs) = parts.into_iter().map(|p| (p.layout, p.sig)).unzip();
        Some(Fragment {
            size,
            bounded,
            lb,
            ub,
            explicit_lb,
            explicit_ub,
            true_lb: true_lb.unwrap_or(0),
            true_ub: true_ub.unwrap_or(0),
            align,
            layout: Node::concat(layouts),
            sig: Sig::concat(sigs),
        })
    }

    /// The same data with explicit bounds `[lb, lb + extent)` (MPI_Type_create_resized).
    pub(crate) fn resized(&self, lb: i64, extent: i64) -> Option<Fragment> {
        Some(Fragment {
            bounded: true,
            explicit_lb: true,
            explicit_ub: true,
            lb,
            ub: lb.checked_add(extent)?,
            ..self.clone()
        })
    }

    /// The MPI-1 marker `MPI_LB` (`lower`) or `MPI_UB` at displacement 0: no data, one
    /// sticky bound.
    pub(crate) fn marker(lower: bool) -> Fragment {
        Fragment {
            bounded: true,
            explicit_lb: lower,
            explicit_ub: !lower,
            ..Fragment::empty(1)
        }
    }
}
