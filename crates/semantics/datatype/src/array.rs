//! MPI_Type_create_subarray and MPI_Type_create_darray: a block of an n-dimensional
//! array, and one process's share of an array distributed over a process grid.
//! Both are built dimension by dimension from the fastest-varying one outwards, and
//! get lower bound 0 and the extent of the whole array, as the standard defines.

use crate::datatype::Datatype;
use crate::envelope::{Ctor, Darray, Distribution, Order, DFLT_DARG};
use crate::error::{ErrorKind, TypeError};
use crate::fragment::Fragment;

fn bad(
    function: &'static str,
    argument: &'static str,
    value: impl std::fmt::Display,
    reason: impl Into<String>,
) -> TypeError {
    TypeError::new(ErrorKind::Argument, function, argument, value, reason)
}

/// Dimension indices from the fastest-varying to the slowest.
fn fastest_first(ndims: usize, order: Order) -> Vec<usize> {
    match order {
        Order::C => (0..ndims).rev().collect(),
        Order::Fortran => (0..ndims).collect(),
    }
}

/// Gives `frag` lower bound 0 and extent `extent` (as MPI_Type_create_resized).
fn whole_array(frag: Option<Fragment>, extent: i64) -> Option<Fragment> {
    frag?.resized(0, extent)
}

fn dims_check(
    function: &'static str,
    ndims: usize,
    lens: &[(&'static str, usize)],
) -> Result<(), TypeError> {
    if ndims == 0 {
        return Err(bad(
            function,
            "ndims",
            0,
            "at least one dimension is required",
        ));
    }
    for &(name, len) in lens {
        if len != ndims {
            return Err(bad(
                function,
                name,
                format!("an array of {len} entries"),
                format!("expected ndims = {ndims} entries"),
            ));
        }
    }
    Ok(())
}

impl Datatype {
    /// The block `starts[i] .. starts[i] + subsizes[i]` of an array of `sizes`.
    pub fn subarray(
        sizes: &[u64],
        subsizes: &[u64],
        starts: &[u64],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_create_subarray";
        let n = sizes.len();
        dims_check(
            F,
            n,
            &[
                ("array_of_subsizes", subsizes.len()),
                ("array_of_starts", starts.len()),
            ],
        )?;
        for i in 0..n {
            if sizes[i] == 0 {
                return Err(bad(
                    F,
                    "array_of_sizes",
                    format!("{:?}", sizes),
                    format!("entry {i} must be at least 1"),
                ));
            }
            if subsizes[i] == 0 || subsizes[i] > sizes[i] {
                return Err(bad(
                    F,
                    "array_of_subsizes",
                    format!("{:?}", subsizes),
                    format!("entry {i} must be in 1..={}", sizes[i]),
                ));
            }
            if starts[i] > sizes[i] - subsizes[i] {
                return Err(bad(
                    F,
                    "array_of_starts",
                    format!("{:?}", starts),
                    format!("entry {i} must be in 0..={}", sizes[i] - subsizes[i]),
                ));
            }
        }
        let build = || -> Option<Fragment> {
            let mut stride = old.extent();
            let mut frag = old.fragment().clone();
            let mut disp: i64 = 0;
            for &i in &fastest_first(n, order) {
                frag = frag.repeat(subsizes[i], stride)?;
                disp = disp.checked_add(i64::try_from(starts[i]).ok()?.checked_mul(stride)?)?;
                stride = stride.checked_mul(i64::try_from(sizes[i]).ok()?)?;
            }
            whole_array(frag.shift(disp), stride)
        };
        let ctor = Ctor::Subarray(
            sizes.to_vec(),
            subsizes.to_vec(),
            starts.to_vec(),
            order,
            old.clone(),
        );
        Datatype::build(build(), ctor, F, "array_of_sizes", format!("{sizes:?}"))
    }

    /// Process `rank`'s share of an array of `gsizes` distributed over a `psizes` grid
    /// of `size` processes (ranks in row-major order over the grid).
    #[allow(clippy::too_many_arguments)] // the standard's argument list
    pub fn darray(
        size: u64,
        rank: u64,
        gsizes: &[u64],
        distribs: &[Distribution],
        dargs: &[i64],
        psizes: &[u64],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        const F: &str = "MPI_Type_create_darray";
        let n = gsizes.len();
        dims_check(
            F,
            n,
            &[
                ("array_of_distribs", distribs.len()),
                ("array_of_dargs", dargs.len()),
                ("array_of_psizes", psizes.len()),
            ],
        )?;
        if rank >= size {
            return Err(bad(F, "rank", rank, format!("must be below size = {size}")));
        }
        let grid = psizes.iter().try_fold(1u64, |acc, &p| acc.checked_mul(p));
        if grid != Some(size) {
            return Err(bad(
                F,
                "array_of_psizes",
                format!("{psizes:?}"),
                format!("the product must equal size = {size}"),
            ));
        }
        // Row-major coordinates of `rank` in the grid, whatever the array order.
        let mut coords = vec![0u64; n];
        let mut rest = rank;
        for i in (0..n).rev() {
            coords[i] = rest % psizes[i];
            rest /= psizes[i];
        }
        let mut blocks = Vec::with_capacity(n);
        for i in 0..n {
            blocks.push(dimension_block(
                i,
                gsizes[i],
                distribs[i],
                dargs[i],
                psizes[i],
            )?);
        }
        let build = || -> Option<Fragment> {
            let mut stride = old.extent();
            let mut frag = old.fragment().clone();
            for &i in &fastest_first(n, order) {
                let g = gsizes[i];
                let b = blocks[i];
                let p = psizes[i];
                let c = coords[i];
                // Blocks of `b` indices dealt round-robin: this process owns blocks
                // c, c + p, c + 2p, ...; all full but possibly the last.
                let first = c.checked_mul(b)?;
                let period = p.checked_mul(b)?;
                let owned_starts = if first >= g {
                    0
                } else {
                    (g - first).div_ceil(period)
                };
                let last_start = first + owned_starts.saturating_sub(1) * period;
                let last_len = if owned_starts == 0 {
                    0
                } else {
                    (g - last_start).min(b)
                };
                let full = if last_len == b {
                    owned_starts
                } else {
                    owned_starts.saturating_sub(1)
                };
                let block = frag.repeat(b, stride)?;
                let step = i64::try_from(period).ok()?.checked_mul(stride)?;
                let head = block
                    .repeat(full, step)?
                    .shift(i64::try_from(first).ok()?.checked_mul(stride)?)?;
                let mut parts = vec![head];
                if last_len > 0 && last_len < b {
                    let at = i64::try_from(last_start).ok()?.checked_mul(stride)?;
                    parts.push(frag.repeat(last_len, stride)?.shift(at)?);
                }
                stride = stride.checked_mul(i64::try_from(g).ok()?)?;
                frag = whole_array(Fragment::concat(parts, false), stride)?;
            }
            Some(frag)
        };
        let ctor = Ctor::Darray(Darray {
            size,
            rank,
            gsizes: gsizes.to_vec(),
            distribs: distribs.to_vec(),
            dargs: dargs.to_vec(),
            psizes: psizes.to_vec(),
            order,
            old: old.clone(),
        });
        Datatype::build(build(), ctor, F, "array_of_gsizes", format!("{gsizes:?}"))
    }
}

/// The distribution block size of dimension `i` (a whole dimension for NONE, one
/// contiguous share per process for BLOCK, `darg` indices for CYCLIC).
fn dimension_block(
    i: usize,
    g: u64,
    distrib: Distribution,
    darg: i64,
    p: u64,
) -> Result<u64, TypeError> {
    const F: &str = "MPI_Type_create_darray";
    if g == 0 {
        return Err(bad(
            F,
            "array_of_gsizes",
            0,
            format!("entry {i} must be at least 1"),
        ));
    }
    if darg != DFLT_DARG && darg <= 0 {
        return Err(bad(
            F,
            "array_of_dargs",
            darg,
            format!("entry {i} must be positive or MPI_DISTRIBUTE_DFLT_DARG"),
        ));
    }
    let darg = (darg != DFLT_DARG).then_some(darg as u64);
    match distrib {
        Distribution::None => {
            if p != 1 {
                return Err(bad(
                    F,
                    "array_of_psizes",
                    p,
                    format!("entry {i} must be 1 for MPI_DISTRIBUTE_NONE"),
                ));
            }
            Ok(g)
        }
        Distribution::Block => {
            let b = darg.unwrap_or(g.div_ceil(p));
            if b.checked_mul(p).is_none_or(|covered| covered < g) {
                return Err(bad(
                    F,
                    "array_of_dargs",
                    b,
                    format!("entry {i}: {p} blocks of {b} do not cover {g} indices"),
                ));
            }
            Ok(b)
        }
        Distribution::Cyclic => Ok(darg.unwrap_or(1)),
    }
}
