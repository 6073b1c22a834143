//! Process topologies: Cartesian grids, graphs and distributed graphs attached to a
//! communicator, and the rank arithmetic the topology calls need.
//!
//! Reordering is never done (`reorder` is a hint the standard lets us ignore): rank `r`
//! of the topology communicator is rank `r` of its parent, which keeps the mapping
//! trivially consistent on every member without communication.

use crate::coll::allgather_bytes;
use crate::comm::{Comm, CommId, UNDEFINED};
use crate::comm_ops;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::runtime;
use std::sync::Arc;

/// (sources, destinations) of one process, as ranks; `None` is `MPI_PROC_NULL`.
pub type NeighborLists = (Vec<Option<usize>>, Vec<Option<usize>>);

/// The topology of a communicator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart(Cart),
    /// `MPI_Graph_create`: `index[i]` is the cumulative neighbour count of nodes 0..=i,
    /// `edges` the concatenated neighbour lists (as in the standard's arguments).
    Graph {
        index: Vec<usize>,
        edges: Vec<usize>,
    },
    DistGraph(DistGraph),
}

/// A Cartesian grid in row-major order (the last dimension varies fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cart {
    pub dims: Vec<usize>,
    pub periods: Vec<bool>,
}

/// This process's edges of a distributed graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistGraph {
    pub sources: Vec<usize>,
    pub source_weights: Vec<i32>,
    pub destinations: Vec<usize>,
    pub destination_weights: Vec<i32>,
    /// False when the application passed `MPI_UNWEIGHTED`.
    pub weighted: bool,
}

impl Cart {
    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }

    /// Coordinates of `rank`.
    pub fn coords(&self, rank: usize) -> Vec<usize> {
        let mut rest = rank;
        let mut c = vec![0; self.dims.len()];
        for (d, &n) in self.dims.iter().enumerate().rev() {
            c[d] = rest % n;
            rest /= n;
        }
        c
    }

    /// Rank at `coords`; periodic dimensions wrap, others must be in range.
    pub fn rank(&self, coords: &[i64]) -> Option<usize> {
        let mut r = 0usize;
        for ((&c, &n), &p) in coords.iter().zip(&self.dims).zip(&self.periods) {
            let n = n as i64;
            let c = if p {
                c.rem_euclid(n)
            } else if (0..n).contains(&c) {
                c
            } else {
                return None;
            };
            r = r * n as usize + c as usize;
        }
        Some(r)
    }

    /// `MPI_Cart_shift`: (source, destination) of a shift by `disp` along `dim`.
    pub fn shift(&self, rank: usize, dim: usize, disp: i64) -> (Option<usize>, Option<usize>) {
        let at = |delta: i64| {
            let mut c: Vec<i64> = self.coords(rank).iter().map(|&x| x as i64).collect();
            c[dim] += delta;
            self.rank(&c)
        };
        (at(-disp), at(disp))
    }
}

impl Topology {
    /// Graph neighbours of node `rank` (an `MPI_Graph_create` topology).
    fn graph_neighbors(index: &[usize], edges: &[usize], rank: usize) -> Vec<usize> {
        let start = if rank == 0 { 0 } else { index[rank - 1] };
        edges[start..index[rank]].to_vec()
    }

    /// (sources, destinations) of `rank`, in the order the neighbourhood collectives use.
    pub fn neighbors(&self, rank: usize) -> NeighborLists {
        match self {
            Topology::Cart(c) => {
                let both: Vec<Option<usize>> = (0..c.dims.len())
                    .flat_map(|d| {
                        let (minus, plus) = c.shift(rank, d, 1);
                        [minus, plus]
                    })
                    .collect();
                (both.clone(), both)
            }
            Topology::Graph { index, edges } => {
                let n: Vec<Option<usize>> = Self::graph_neighbors(index, edges, rank)
                    .into_iter()
                    .map(Some)
                    .collect();
                (n.clone(), n)
            }
            Topology::DistGraph(g) => (
                g.sources.iter().map(|&s| Some(s)).collect(),
                g.destinations.iter().map(|&d| Some(d)).collect(),
            ),
        }
    }

    /// Neighbours of any node of a graph topology (`MPI_Graph_neighbors`).
    pub fn graph_node_neighbors(&self, node: usize) -> Option<Vec<usize>> {
        match self {
            Topology::Graph { index, edges } if node < index.len() => {
                Some(Self::graph_neighbors(index, edges, node))
            }
            _ => None,
        }
    }
}

impl Comm {
    /// (sources, destinations) for neighbourhood collectives, as ranks in this
    /// communicator; `None` is `MPI_PROC_NULL`. Cartesian: for each dimension the -1
    /// then the +1 neighbour. `None` overall when the communicator has no topology.
    pub fn neighbors(&self) -> Option<NeighborLists> {
        self.topology.as_ref().map(|t| t.neighbors(self.rank))
    }
}

/// `MPI_Dims_create`: fills the zero entries of `dims` so the product is `nnodes`, as
/// balanced as possible, in non-increasing order.
pub fn dims_create(function: &str, nnodes: usize, dims: &mut [usize]) -> MpiResult<()> {
    let fixed: usize = dims.iter().filter(|&&d| d != 0).product();
    let free = dims.iter().filter(|&&d| d == 0).count();
    if fixed == 0 || !nnodes.is_multiple_of(fixed) {
        return Err(MpiError::arg(
            ErrorClass::Dims,
            function,
            "dims",
            format!("{dims:?}"),
            format!("the fixed entries do not divide nnodes = {nnodes}"),
        ));
    }
    if free == 0 {
        return if fixed == nnodes {
            Ok(())
        } else {
            Err(MpiError::arg(
                ErrorClass::Dims,
                function,
                "dims",
                format!("{dims:?}"),
                format!("the product is not nnodes = {nnodes}"),
            ))
        };
    }
    let n = nnodes / fixed;
    let mut best = Vec::new();
    let search = Search {
        divisors: divisors(n),
    };
    search.balanced(n, free, n, &mut Vec::new(), &mut best);
    let mut it = best.into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = it.next().expect("one factor per free dimension");
    }
    Ok(())
}

/// The divisors of `n`, largest first (trial division up to its square root).
fn divisors(n: usize) -> Vec<usize> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1;
    while d * d <= n {
        if n.is_multiple_of(d) {
            small.push(d);
            if d * d != n {
                large.push(n / d);
            }
        }
        d += 1;
    }
    large.extend(small.into_iter().rev());
    large
}

/// The balanced factorisation search of `MPI_Dims_create` over the divisors of the
/// number to split (every factor divides it).
struct Search {
    divisors: Vec<usize>,
}

impl Search {
    /// Searches non-increasing factorisations of `n` into `k` factors (each at most
    /// `cap`), keeping the one with the smallest spread between largest and smallest.
    fn balanced(
        &self,
        n: usize,
        k: usize,
        cap: usize,
        cur: &mut Vec<usize>,
        best: &mut Vec<usize>,
    ) {
        if k == 1 {
            if n <= cap {
                cur.push(n);
                let spread = |v: &[usize]| v[0] - v[v.len() - 1];
                if best.is_empty() || spread(cur) < spread(best) {
                    *best = cur.clone();
                }
                cur.pop();
            }
            return;
        }
        // The largest remaining factor is at least the k-th root of n.
        let at_least_root = |f: usize| f.checked_pow(k as u32).is_none_or(|p| p >= n);
        for &f in &self.divisors {
            if f > cap.min(n) || !n.is_multiple_of(f) {
                continue;
            }
            if !at_least_root(f) {
                break;
            }
            cur.push(f);
            self.balanced(n / f, k - 1, f, cur, best);
            cur.pop();
        }
    }
}

fn attach(function: &str, comm: CommId, topology: Topology) -> MpiResult<()> {
    runtime::with(function, |rt| {
        rt.comm_mut(function, comm)?.topology = Some(Arc::new(topology));
        Ok(())
    })
}

/// Attaches `topology` to a new communicator made from `parent`'s first `size` ranks
/// (the others get `None`, i.e. `MPI_COMM_NULL`).
fn create_over(
    function: &str,
    parent: CommId,
    size: usize,
    topology: Topology,
) -> MpiResult<Option<CommId>> {
    let (rank, parent_size) = runtime::with(function, |rt| {
        let c = rt.comm(function, parent)?;
        Ok((c.rank, c.size()))
    })?;
    if size > parent_size {
        return Err(MpiError::arg(
            ErrorClass::Topology,
            function,
            "dims/nnodes",
            size,
            format!("more processes than the communicator's {parent_size}"),
        ));
    }
    let color = if rank < size { 0 } else { UNDEFINED };
    let new = comm_ops::split(function, parent, color, rank as i32)?;
    if let Some(id) = new {
        attach(function, id, topology)?;
    }
    Ok(new)
}

/// `MPI_Cart_create`.
pub fn cart_create(function: &str, parent: CommId, cart: Cart) -> MpiResult<Option<CommId>> {
    comm_ops::check_intra(function, parent)?;
    create_over(function, parent, cart.size(), Topology::Cart(cart))
}

/// `MPI_Graph_create`.
pub fn graph_create(
    function: &str,
    parent: CommId,
    index: Vec<usize>,
    edges: Vec<usize>,
) -> MpiResult<Option<CommId>> {
    comm_ops::check_intra(function, parent)?;
    let n = index.len();
    if index.windows(2).any(|w| w[1] < w[0]) || index.last().copied().unwrap_or(0) != edges.len() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "index",
            format!("{index:?}"),
            "must be non-decreasing and end at the number of edges",
        ));
    }
    if let Some(&bad) = edges.iter().find(|&&e| e >= n) {
        return Err(MpiError::arg(
            ErrorClass::Topology,
            function,
            "edges",
            bad,
            format!("not a node of the {n}-node graph"),
        ));
    }
    create_over(function, parent, n, Topology::Graph { index, edges })
}

/// `MPI_Cart_sub`: the sub-grid through this process keeping dimensions `keep`.
pub fn cart_sub(function: &str, comm: CommId, keep: &[bool]) -> MpiResult<CommId> {
    let (cart, rank) = runtime::with(function, |rt| {
        let c = rt.comm(function, comm)?;
        match c.topology.as_deref() {
            Some(Topology::Cart(cart)) => Ok((cart.clone(), c.rank)),
            _ => Err(MpiError::arg(
                ErrorClass::Topology,
                function,
                "comm",
                "a communicator",
                "has no Cartesian topology",
            )),
        }
    })?;
    let coords = cart.coords(rank);
    let (mut color, mut key) = (0usize, 0usize);
    let mut sub = Cart {
        dims: Vec::new(),
        periods: Vec::new(),
    };
    for d in 0..cart.dims.len() {
        if keep[d] {
            key = key * cart.dims[d] + coords[d];
            sub.dims.push(cart.dims[d]);
            sub.periods.push(cart.periods[d]);
        } else {
            color = color * cart.dims[d] + coords[d];
        }
    }
    let new = comm_ops::split(function, comm, color as i32, key as i32)?
        .expect("every member has a color");
    attach(function, new, Topology::Cart(sub))?;
    Ok(new)
}

/// `MPI_Dist_graph_create_adjacent`: each process names its own edges.
pub fn dist_graph_adjacent(function: &str, parent: CommId, g: DistGraph) -> MpiResult<CommId> {
    comm_ops::check_intra(function, parent)?;
    check_ranks(function, parent, g.sources.iter().chain(&g.destinations))?;
    let new = comm_ops::dup(function, parent)?;
    attach(function, new, Topology::DistGraph(g))?;
    Ok(new)
}

fn check_ranks<'a>(
    function: &str,
    comm: CommId,
    ranks: impl Iterator<Item = &'a usize>,
) -> MpiResult<()> {
    let n = runtime::with(function, |rt| Ok(rt.comm(function, comm)?.size()))?;
    for &r in ranks {
        if r >= n {
            return Err(MpiError::arg(
                ErrorClass::Rank,
                function,
                "sources/destinations",
                r,
                format!("not a rank of the {n}-process communicator"),
            ));
        }
    }
    Ok(())
}

/// One edge given to `MPI_Dist_graph_create`: (source, destination, weight).
pub type Edge = (usize, usize, i32);

/// `MPI_Dist_graph_create`: any process may name any edge; every process learns the
/// edges that start or end at it. Edges are ordered by the rank that named them, then
/// by the order it named them in.
pub fn dist_graph_create(
    function: &str,
    parent: CommId,
    edges: &[Edge],
    weighted: bool,
) -> MpiResult<CommId> {
    comm_ops::check_intra(function, parent)?;
    check_ranks(function, parent, edges.iter().flat_map(|e| [&e.0, &e.1]))?;
    let rank = runtime::with(function, |rt| Ok(rt.comm(function, parent)?.rank))?;
    // Two rounds of equal-sized blocks: the edge counts, then the edges padded to the
    // longest list.
    let counts = allgather_bytes(function, parent, &(edges.len() as u64).to_le_bytes())?;
    let counts: Vec<usize> = counts
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")) as usize)
        .collect();
    // At least one slot: a graph nobody gave an edge to still needs blocks to split.
    let longest = counts.iter().copied().max().unwrap_or(0).max(1);
    let mut mine = vec![0u8; longest * 20];
    for (i, &(s, d, w)) in edges.iter().enumerate() {
        let e = &mut mine[i * 20..(i + 1) * 20];
        e[..8].copy_from_slice(&(s as u64).to_le_bytes());
        e[8..16].copy_from_slice(&(d as u64).to_le_bytes());
        e[16..].copy_from_slice(&w.to_le_bytes());
    }
    let all = allgather_bytes(function, parent, &mine)?;
    let mut g = DistGraph {
        sources: Vec::new(),
        source_weights: Vec::new(),
        destinations: Vec::new(),
        destination_weights: Vec::new(),
        weighted,
    };
    for (block, &count) in all.chunks_exact(longest * 20).zip(&counts) {
        for e in block.chunks_exact(20).take(count) {
            let s = u64::from_le_bytes(e[..8].try_into().expect("8 bytes")) as usize;
            let d = u64::from_le_bytes(e[8..16].try_into().expect("8 bytes")) as usize;
            let w = i32::from_le_bytes(e[16..].try_into().expect("4 bytes"));
            if s == rank {
                g.destinations.push(d);
                g.destination_weights.push(w);
            }
            if d == rank {
                g.sources.push(s);
                g.source_weights.push(w);
            }
        }
    }
    let new = comm_ops::dup(function, parent)?;
    attach(function, new, Topology::DistGraph(g))?;
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cart(dims: &[usize], periods: &[bool]) -> Cart {
        Cart {
            dims: dims.to_vec(),
            periods: periods.to_vec(),
        }
    }

    #[test]
    fn cart_coords_and_rank_are_inverse_row_major() {
        let c = cart(&[2, 3, 4], &[false, true, false]);
        for r in 0..24 {
            let co: Vec<i64> = c.coords(r).iter().map(|&x| x as i64).collect();
            assert_eq!(c.rank(&co), Some(r));
        }
        assert_eq!(c.coords(23), vec![1, 2, 3]);
        assert_eq!(c.coords(5), vec![0, 1, 1]);
        assert_eq!(c.rank(&[0, -1, 0]), Some(8));
        assert_eq!(c.rank(&[2, 0, 0]), None);
    }

    #[test]
    fn cart_shift_wraps_only_periodic_dimensions() {
        let c = cart(&[3, 2], &[false, true]);
        assert_eq!(c.shift(0, 0, 1), (None, Some(2)));
        assert_eq!(c.shift(4, 0, 1), (Some(2), None));
        assert_eq!(c.shift(0, 1, 1), (Some(1), Some(1)));
        assert_eq!(c.shift(2, 0, 2), (None, None));
    }

    #[test]
    fn cart_neighbors_list_minus_then_plus_per_dimension() {
        let t = Topology::Cart(cart(&[2, 2], &[true, false]));
        let (s, d) = t.neighbors(1);
        assert_eq!(s, vec![Some(3), Some(3), Some(0), None]);
        assert_eq!(s, d);
    }

    #[test]
    fn graph_neighbors_follow_the_index_array() {
        let t = Topology::Graph {
            index: vec![2, 3, 4],
            edges: vec![1, 2, 0, 0],
        };
        assert_eq!(t.neighbors(0).0, vec![Some(1), Some(2)]);
        assert_eq!(t.graph_node_neighbors(2), Some(vec![0]));
        assert_eq!(t.graph_node_neighbors(3), None);
    }

    fn dims(n: usize, d: &[usize]) -> Vec<usize> {
        let mut d = d.to_vec();
        dims_create("test", n, &mut d).unwrap();
        d
    }

    #[test]
    fn dims_create_balances_and_sorts_descending() {
        assert_eq!(dims(6, &[0, 0]), vec![3, 2]);
        assert_eq!(dims(7, &[0, 0]), vec![7, 1]);
        assert_eq!(dims(6, &[0, 3, 0]), vec![2, 3, 1]);
        assert_eq!(dims(16, &[0, 0, 0]), vec![4, 2, 2]);
        assert_eq!(dims(64, &[0, 0, 0]), vec![4, 4, 4]);
        assert_eq!(dims(12, &[0, 0]), vec![4, 3]);
        assert_eq!(dims(1, &[0, 0, 0]), vec![1, 1, 1]);
        assert_eq!(dims(36, &[0, 0, 0]), vec![4, 3, 3]);
        assert_eq!(dims(1_000_000_007, &[0, 0]), vec![1_000_000_007, 1]);
        assert_eq!(dims(1 << 20, &[0, 0, 0, 0]), vec![32, 32, 32, 32]);
        let d = dims(720_720, &[0, 0, 0, 0, 0, 0]);
        assert_eq!(d.iter().product::<usize>(), 720_720);
        assert!(d.windows(2).all(|w| w[0] >= w[1]), "{d:?}");
        assert_eq!(d, vec![13, 11, 10, 9, 8, 7]);
        let mut bad = vec![0, 5];
        assert!(dims_create("test", 7, &mut bad).is_err());
    }
}
