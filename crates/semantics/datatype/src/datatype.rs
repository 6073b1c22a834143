//! `Datatype`: an immutable, cheaply cloned datatype whose layout is compiled when it
//! is built (so MPI_Type_commit has nothing left to do), and the constructors of the
//! standard, each validating its arguments.

use crate::basic::Basic;
use crate::envelope::{Contents, Ctor, Envelope, Marker, F90};
use crate::error::{ErrorKind, TypeError};
use crate::fragment::Fragment;
use crate::layout::Node;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A datatype. Clones share the compiled layout. The predefined types live in one
/// static table, so cloning and dropping them (a lookup on every communication call)
/// touches no reference count: two atomic read-modify-writes per call otherwise.
#[derive(Clone)]
pub struct Datatype(Repr);

#[derive(Clone)]
enum Repr {
    Named(&'static Inner),
    Built(Arc<Inner>),
}

#[derive(Clone)]
struct Inner {
    frag: Fragment,
    ctor: Ctor,
    /// Built by a `_c` (large count) constructor: counts are reported as large counts.
    large_counts: bool,
}

impl fmt::Debug for Datatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Datatype({:?}, size {}, lb {}, extent {})",
            self.inner().ctor.combiner(),
            self.size(),
            self.lb(),
            self.extent()
        )
    }
}

fn check_len(
    function: &'static str,
    argument: &'static str,
    len: usize,
    expected: usize,
) -> Result<(), TypeError> {
    if len == expected {
        Ok(())
    } else {
        Err(TypeError::new(
            ErrorKind::Argument,
            function,
            argument,
            format!("an array of {len} entries"),
            format!("expected {expected} entries, one per block"),
        ))
    }
}

/// Element displacements to bytes.
fn scale(
    function: &'static str,
    argument: &'static str,
    displs: &[i64],
    extent: i64,
) -> Result<Vec<i64>, TypeError> {
    displs
        .iter()
        .map(|&d| {
            d.checked_mul(extent)
                .ok_or_else(|| TypeError::overflow(function, argument, d))
        })
        .collect()
}

impl Datatype {
    pub(crate) fn build(
        frag: Option<Fragment>,
        ctor: Ctor,
        function: &'static str,
        argument: &'static str,
        value: impl fmt::Display,
    ) -> Result<Datatype, TypeError> {
        let frag = frag.ok_or_else(|| TypeError::overflow(function, argument, value))?;
        Ok(Datatype::built(Inner {
            frag,
            ctor,
            large_counts: false,
        }))
    }

    fn built(inner: Inner) -> Datatype {
        Datatype(Repr::Built(Arc::new(inner)))
    }

    fn inner(&self) -> &Inner {
        match &self.0 {
            Repr::Named(inner) => inner,
            Repr::Built(inner) => inner,
        }
    }

    pub(crate) fn fragment(&self) -> &Fragment {
        &self.inner().frag
    }

    /// A predefined datatype.
    pub fn basic(b: Basic) -> Datatype {
        static NAMED: OnceLock<Vec<Inner>> = OnceLock::new();
        let named = NAMED.get_or_init(|| {
            Basic::ALL
                .iter()
                .map(|&b| Inner {
                    frag: Fragment::basic(b),
                    ctor: Ctor::Named(b),
                    large_counts: false,
                })
                .collect()
        });
        // ALL lists the variants in declaration order, so a variant's discriminant is
        // its index.
        Datatype(Repr::Named(&named[b as usize]))
    }

    /// The MPI-1 marker type `MPI_LB` or `MPI_UB`.
    pub fn marker(m: Marker) -> Datatype {
        static MARKERS: OnceLock<[Inner; 2]> = OnceLock::new();
        let markers = MARKERS.get_or_init(|| {
            [Marker::Lower, Marker::Upper].map(|m| Inner {
                frag: Fragment::marker(m == Marker::Lower),
                ctor: Ctor::Marker(m),
                large_counts: false,
            })
        });
        Datatype(Repr::Named(&markers[usize::from(m == Marker::Upper)]))
    }

    /// `count` elements of `old` one after the other.
    pub fn contiguous(count: u64, old: &Datatype) -> Result<Datatype, TypeError> {
        let frag = old.fragment().repeat(count, old.extent());
        let ctor = Ctor::Contiguous(count, old.clone());
        Datatype::build(frag, ctor, "MPI_Type_contiguous", "count", count)
    }

    /// `count` blocks of `blocklen` elements, block starts `stride` elements apart.
    pub fn vector(
        count: u64,
        blocklen: u64,
        stride: i64,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_vector";
        let bytes = stride
            .checked_mul(old.extent())
            .ok_or_else(|| TypeError::overflow(F, "stride", stride))?;
        let frag = Datatype::strided(old, count, blocklen, bytes);
        Datatype::build(
            frag,
            Ctor::Vector(count, blocklen, stride, old.clone()),
            F,
            "count",
            count,
        )
    }

    /// As `vector` with the stride in bytes.
    pub fn hvector(
        count: u64,
        blocklen: u64,
        stride_bytes: i64,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let frag = Datatype::strided(old, count, blocklen, stride_bytes);
        let ctor = Ctor::Hvector(count, blocklen, stride_bytes, old.clone());
        Datatype::build(frag, ctor, "MPI_Type_create_hvector", "count", count)
    }

    fn strided(old: &Datatype, count: u64, blocklen: u64, stride: i64) -> Option<Fragment> {
        old.fragment()
            .repeat(blocklen, old.extent())?
            .repeat(count, stride)
    }

    /// Blocks of `old` at byte displacements, in the order given.
    fn blocks(
        old: &Datatype,
        blocklens: impl Iterator<Item = u64>,
        displs: &[i64],
    ) -> Option<Fragment> {
        let base = old.fragment();
        let parts = blocklens
            .zip(displs)
            .map(|(bl, &d)| base.repeat(bl, old.extent())?.shift(d))
            .collect::<Option<Vec<_>>>()?;
        Fragment::concat(parts, false)
    }

    /// Blocks of `blocklens[i]` elements at `displs[i]` elements.
    pub fn indexed(
        blocklens: &[u64],
        displs: &[i64],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_indexed";
        check_len(F, "array_of_displacements", displs.len(), blocklens.len())?;
        let bytes = scale(F, "array_of_displacements", displs, old.extent())?;
        let frag = Datatype::blocks(old, blocklens.iter().copied(), &bytes);
        let ctor = Ctor::Indexed(blocklens.to_vec(), displs.to_vec(), old.clone());
        Datatype::build(
            frag,
            ctor,
            F,
            "array_of_blocklengths",
            format!("{blocklens:?}"),
        )
    }

    /// As `indexed` with displacements in bytes.
    pub fn hindexed(
        blocklens: &[u64],
        displs_bytes: &[i64],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_create_hindexed";
        check_len(
            F,
            "array_of_displacements",
            displs_bytes.len(),
            blocklens.len(),
        )?;
        let frag = Datatype::blocks(old, blocklens.iter().copied(), displs_bytes);
        let ctor = Ctor::Hindexed(blocklens.to_vec(), displs_bytes.to_vec(), old.clone());
        Datatype::build(
            frag,
            ctor,
            F,
            "array_of_blocklengths",
            format!("{blocklens:?}"),
        )
    }

    /// As `indexed` with one block length for all blocks.
    pub fn indexed_block(
        blocklen: u64,
        displs: &[i64],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_create_indexed_block";
        let bytes = scale(F, "array_of_displacements", displs, old.extent())?;
        let frag = Datatype::blocks(old, std::iter::repeat(blocklen), &bytes);
        let ctor = Ctor::IndexedBlock(blocklen, displs.to_vec(), old.clone());
        Datatype::build(frag, ctor, F, "blocklength", blocklen)
    }

    /// As `indexed_block` with displacements in bytes.
    pub fn hindexed_block(
        blocklen: u64,
        displs_bytes: &[i64],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_create_hindexed_block";
        let frag = Datatype::blocks(old, std::iter::repeat(blocklen), displs_bytes);
        let ctor = Ctor::HindexedBlock(blocklen, displs_bytes.to_vec(), old.clone());
        Datatype::build(frag, ctor, F, "blocklength", blocklen)
    }

    /// Blocks of different types at byte displacements (MPI_Type_create_struct); the
    /// extent is padded to the alignment of the most aligned member unless a member has
    /// bounds set by `resized`.
    pub fn structure(
        blocklens: &[u64],
        displs_bytes: &[i64],
        types: &[Datatype],
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_create_struct";
        check_len(
            F,
            "array_of_displacements",
            displs_bytes.len(),
            blocklens.len(),
        )?;
        check_len(F, "array_of_types", types.len(), blocklens.len())?;
        let frag = blocklens
            .iter()
            .zip(displs_bytes)
            .zip(types)
            .map(|((&bl, &d), t)| t.fragment().repeat(bl, t.extent())?.shift(d))
            .collect::<Option<Vec<_>>>()
            .and_then(|parts| Fragment::concat(parts, true));
        let ctor = Ctor::Struct(blocklens.to_vec(), displs_bytes.to_vec(), types.to_vec());
        Datatype::build(
            frag,
            ctor,
            F,
            "array_of_blocklengths",
            format!("{blocklens:?}"),
        )
    }

    /// The same data with lower bound `lb` and extent `extent`.
    pub fn resized(old: &Datatype, lb: i64, extent: i64) -> Result<Datatype, TypeError> {
        let frag = old.fragment().resized(lb, extent);
        let ctor = Ctor::Resized(lb, extent, old.clone());
        Datatype::build(frag, ctor, "MPI_Type_create_resized", "extent", extent)
    }

    /// Whether `other` is this very type (not merely an equal one): the ABI layer uses it
    /// to find the handle an application knows a type by.
    pub fn same(&self, other: &Datatype) -> bool {
        std::ptr::eq(self.inner(), other.inner())
    }

    /// The Fortran 90 type of `kind`, laid out, matched and reduced as basic type `b`
    /// (`MPI_Type_create_f90_*`: "predefined" types whose envelope tells the request).
    pub fn f90(kind: F90, b: Basic) -> Datatype {
        Datatype::built(Inner {
            frag: Datatype::basic(b).inner().frag.clone(),
            ctor: Ctor::F90(kind, b),
            large_counts: false,
        })
    }

    /// A copy reporting the Dup combiner (MPI_Type_dup).
    pub fn dup(&self) -> Datatype {
        Datatype::built(Inner {
            frag: self.inner().frag.clone(),
            ctor: Ctor::Dup(self.clone()),
            large_counts: false,
        })
    }

    /// The same type, recorded as made by the large-count (`_c`) form of its constructor,
    /// so get_envelope/get_contents report its counts and displacements as large counts.
    pub fn with_large_counts(&self) -> Datatype {
        Datatype::built(Inner {
            large_counts: true,
            ..self.inner().clone()
        })
    }

    pub fn size(&self) -> u64 {
        self.inner().frag.size
    }
    pub fn lb(&self) -> i64 {
        if self.inner().frag.bounded {
            self.inner().frag.lb
        } else {
            0
        }
    }
    pub fn ub(&self) -> i64 {
        if self.inner().frag.bounded {
            self.inner().frag.ub
        } else {
            0
        }
    }
    pub fn extent(&self) -> i64 {
        self.inner().frag.extent()
    }
    pub fn true_lb(&self) -> i64 {
        self.inner().frag.true_lb
    }
    pub fn true_extent(&self) -> i64 {
        self.inner().frag.true_ub - self.inner().frag.true_lb
    }

    /// Whether `count` elements are `size * count` dense bytes starting at the buffer
    /// address plus `lb` (== `true_lb`), so callers can use the user buffer directly.
    pub fn is_contiguous(&self) -> bool {
        match self.inner().frag.layout {
            Node::Empty => true,
            Node::Block { disp, len } => disp == self.lb() && len as i64 == self.extent(),
            _ => false,
        }
    }

    /// The predefined type this is, if it is one (not for dups of predefined types).
    pub fn basic_kind(&self) -> Option<Basic> {
        match self.inner().ctor {
            Ctor::Named(b) => Some(b),
            _ => None,
        }
    }

    /// The request a Fortran 90 type answers and the basic type it is laid out as.
    pub fn f90_kind(&self) -> Option<(F90, Basic)> {
        match self.inner().ctor {
            Ctor::F90(kind, b) => Some((kind, b)),
            _ => None,
        }
    }

    /// The single basic type all of this type's data is made of, if there is one.
    pub fn uniform_basic(&self) -> Option<Basic> {
        self.inner().frag.sig.uniform()
    }

    /// Byte range `[lo, hi)` relative to the buffer address that `count` elements touch.
    pub fn span(&self, count: u64) -> (i64, i64) {
        if count == 0 || self.size() == 0 {
            return (0, 0);
        }
        let shift = (count as i128 - 1) * self.extent() as i128;
        let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        (
            clamp(self.true_lb() as i128 + shift.min(0)),
            clamp(self.inner().frag.true_ub as i128 + shift.max(0)),
        )
    }

    /// Bytes of `count` elements packed in the native representation.
    pub fn packed_size(&self, count: u64) -> u64 {
        self.size().saturating_mul(count)
    }

    /// Basic elements in the first `bytes` bytes of a packed stream of this type
    /// (MPI_Get_elements); None if `bytes` ends inside a basic element.
    pub fn elements_in(&self, bytes: u64) -> Option<u64> {
        let sig = &self.inner().frag.sig;
        let size = self.size();
        if size == 0 {
            return (bytes == 0).then_some(0);
        }
        let whole = bytes / size;
        Some(whole.checked_mul(sig.elements())? + sig.elements_in(bytes % size)?)
    }

    /// Whether the signature of `count` elements of this type is a prefix of the
    /// signature of `other_count` elements of `other` (pairs compare as their members;
    /// MPI_PACKED matches any data of no more bytes).
    pub fn signature_matches_prefix(&self, count: u64, other: &Datatype, other_count: u64) -> bool {
        let packed = |t: &Datatype| t.uniform_basic() == Some(Basic::Packed);
        let uniform =
            self.uniform_basic().is_some() && self.uniform_basic() == other.uniform_basic();
        if uniform || packed(self) || packed(other) {
            return self.packed_size(count) <= other.packed_size(other_count);
        }
        let mine = self.inner().frag.sig.repeat(count);
        let theirs = other.inner().frag.sig.repeat(other_count);
        let mut theirs = member_runs(theirs.runs());
        let mut pending: Option<(Basic, u64)> = None;
        for (basic, mut n) in member_runs(mine.runs()) {
            while n > 0 {
                let (b, m) = match pending.take().or_else(|| theirs.next()) {
                    Some(run) => run,
                    None => return false,
                };
                if b != basic {
                    return false;
                }
                let used = m.min(n);
                n -= used;
                if m > used {
                    pending = Some((b, m - used));
                }
            }
        }
        true
    }

    pub fn envelope(&self) -> Envelope {
        self.inner().ctor.envelope(self.inner().large_counts)
    }

    pub fn contents(&self) -> Contents {
        self.inner().ctor.contents(self.inner().large_counts)
    }

    /// One element's type signature as runs of (basic type, count), in order: what a
    /// data representation with its own sizes per basic type needs to size and convert.
    pub fn basic_runs(&self) -> Vec<(Basic, u64)> {
        self.signature().runs().collect()
    }

    pub(crate) fn signature(&self) -> &crate::signature::Sig {
        &self.inner().frag.sig
    }

    pub(crate) fn ctor(&self) -> &Ctor {
        &self.inner().ctor
    }

    pub(crate) fn layout(&self) -> &Node {
        &self.inner().frag.layout
    }
}

/// Runs with the pairs split into their members, for signature comparison.
fn member_runs(runs: impl Iterator<Item = (Basic, u64)>) -> impl Iterator<Item = (Basic, u64)> {
    runs.flat_map(|(b, n)| {
        let split = b.pair_members();
        let whole = split.is_none().then_some((b, n));
        let pairs = split
            .into_iter()
            .flat_map(move |(v, i)| (0..n).flat_map(move |_| [(v, 1), (i, 1)]));
        whole.into_iter().chain(pairs)
    })
}
