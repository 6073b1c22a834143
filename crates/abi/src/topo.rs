//! Topology calls: Cartesian, graph and distributed graph communicators.

use crate::comm::{handle, id_of, with_comm};
use crate::consts::*;
use crate::error::{call, Scope};
use crate::util::{count, out, slice, slice_mut};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::topo::{self, Cart, DistGraph, Topology};
use std::os::raw::c_int;
use std::sync::Arc;

/// The topology of a communicator (None: no topology).
fn topology(function: &str, comm: usize) -> MpiResult<(Option<Arc<Topology>>, usize)> {
    with_comm(function, comm, |rt, id| {
        let c = rt.comm(function, id)?;
        Ok((c.topology.clone(), c.rank))
    })
}

fn no_topology(function: &str, what: &str) -> MpiError {
    MpiError::arg(
        ErrorClass::Topology,
        function,
        "comm",
        "a communicator",
        format!("has no {what} topology"),
    )
}

fn cart_of(function: &str, comm: usize) -> MpiResult<(Cart, usize)> {
    match topology(function, comm)? {
        (Some(t), rank) => match &*t {
            Topology::Cart(c) => Ok((c.clone(), rank)),
            _ => Err(no_topology(function, "Cartesian")),
        },
        _ => Err(no_topology(function, "Cartesian")),
    }
}

fn graph_of(function: &str, comm: usize) -> MpiResult<Arc<Topology>> {
    match topology(function, comm)?.0 {
        Some(t) if matches!(*t, Topology::Graph { .. }) => Ok(t),
        _ => Err(no_topology(function, "graph")),
    }
}

/// Neighbours of node `rank` of a graph topology.
fn node_neighbors(function: &str, comm: usize, rank: c_int) -> MpiResult<Vec<usize>> {
    let t = graph_of(function, comm)?;
    usize::try_from(rank)
        .ok()
        .and_then(|r| t.graph_node_neighbors(r))
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Rank,
                function,
                "rank",
                rank,
                "not a node of the graph",
            )
        })
}

fn dist_graph_of(function: &str, comm: usize) -> MpiResult<DistGraph> {
    match topology(function, comm)?.0.as_deref() {
        Some(Topology::DistGraph(g)) => Ok(g.clone()),
        _ => Err(no_topology(function, "distributed graph")),
    }
}

fn ints<'a>(function: &str, arg: &str, p: *const c_int, n: usize) -> MpiResult<&'a [c_int]> {
    slice(function, arg, p, n)
}

/// Non-negative rank-like entries of an array argument.
fn indices(function: &str, arg: &str, v: &[c_int]) -> MpiResult<Vec<usize>> {
    v.iter()
        .map(|&x| {
            usize::try_from(x).map_err(|_| {
                MpiError::arg(
                    ErrorClass::Arg,
                    function,
                    arg,
                    x,
                    "entries are non-negative",
                )
            })
        })
        .collect()
}

fn cart_args(
    function: &str,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
) -> MpiResult<Cart> {
    let n = count(function, "ndims", ndims as i64)? as usize;
    let d = ints(function, "dims", dims, n)?;
    if let Some(&bad) = d.iter().find(|&&x| x <= 0) {
        return Err(MpiError::arg(
            ErrorClass::Dims,
            function,
            "dims",
            bad,
            "dimensions are positive",
        ));
    }
    Ok(Cart {
        dims: d.iter().map(|&x| x as usize).collect(),
        periods: ints(function, "periods", periods, n)?
            .iter()
            .map(|&p| p != 0)
            .collect(),
    })
}

/// Writes up to `max` entries of `v` (the standard's `maxindex`/`maxedges` rule).
fn out_list(
    function: &str,
    arg: &str,
    p: *mut c_int,
    max: c_int,
    v: impl Iterator<Item = c_int>,
) -> MpiResult<()> {
    let max = count(function, arg, max as i64)? as usize;
    let dst = slice_mut(function, arg, p, max)?;
    for (d, x) in dst.iter_mut().zip(v) {
        *d = x;
    }
    Ok(())
}

fn rank_or_null(r: Option<usize>) -> c_int {
    r.map_or(MPI_PROC_NULL, |r| r as c_int)
}

/// Weights of a distributed graph argument: `MPI_UNWEIGHTED` (None) or `n` values;
/// `MPI_WEIGHTS_EMPTY` stands for an empty list.
fn weights(function: &str, arg: &str, p: *const c_int, n: usize) -> MpiResult<Option<Vec<i32>>> {
    if p as usize == MPI_UNWEIGHTED {
        return Ok(None);
    }
    if p as usize == MPI_WEIGHTS_EMPTY {
        return Ok(Some(vec![0; n]));
    }
    Ok(Some(ints(function, arg, p, n)?.to_vec()))
}

export! {
    fn MPI_Dims_create / PMPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
        let f = "MPI_Dims_create";
        call(Scope::Process, || {
            let nn = count(f, "nnodes", nnodes as i64)? as usize;
            let n = count(f, "ndims", ndims as i64)? as usize;
            let d = slice_mut(f, "dims", dims, n)?;
            let mut v = indices(f, "dims", d)?;
            topo::dims_create(f, nn, &mut v)?;
            for (x, y) in d.iter_mut().zip(v) {
                *x = y as c_int;
            }
            Ok(())
        })
    }

    fn MPI_Cart_create / PMPI_Cart_create(comm_old: usize, ndims: c_int, dims: *const c_int, periods: *const c_int, reorder: c_int, comm_cart: *mut usize) -> c_int {
        let f = "MPI_Cart_create";
        let _ = reorder;
        call(Scope::Comm(comm_old), || {
            let cart = cart_args(f, ndims, dims, periods)?;
            let new = topo::cart_create(f, id_of(f, comm_old)?, cart)?;
            out(f, "comm_cart", comm_cart, handle(f, new)?)
        })
    }

    fn MPI_Cart_map / PMPI_Cart_map(comm: usize, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) -> c_int {
        let f = "MPI_Cart_map";
        call(Scope::Comm(comm), || {
            let cart = cart_args(f, ndims, dims, periods)?;
            let (size, rank) = with_comm(f, comm, |rt, id| { let c = rt.comm(f, id)?; Ok((c.size(), c.rank)) })?;
            if cart.size() > size {
                return Err(MpiError::arg(ErrorClass::Dims, f, "dims", cart.size(), format!("more processes than the communicator's {size}")));
            }
            out(f, "newrank", newrank, if rank < cart.size() { rank as c_int } else { MPI_UNDEFINED })
        })
    }

    fn MPI_Cartdim_get / PMPI_Cartdim_get(comm: usize, ndims: *mut c_int) -> c_int {
        let f = "MPI_Cartdim_get";
        call(Scope::Comm(comm), || out(f, "ndims", ndims, cart_of(f, comm)?.0.dims.len() as c_int))
    }

    fn MPI_Cart_get / PMPI_Cart_get(comm: usize, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int {
        let f = "MPI_Cart_get";
        call(Scope::Comm(comm), || {
            let (c, rank) = cart_of(f, comm)?;
            out_list(f, "dims", dims, maxdims, c.dims.iter().map(|&d| d as c_int))?;
            out_list(f, "periods", periods, maxdims, c.periods.iter().map(|&p| p as c_int))?;
            out_list(f, "coords", coords, maxdims, c.coords(rank).into_iter().map(|x| x as c_int))
        })
    }

    fn MPI_Cart_rank / PMPI_Cart_rank(comm: usize, coords: *const c_int, rank: *mut c_int) -> c_int {
        let f = "MPI_Cart_rank";
        call(Scope::Comm(comm), || {
            let (c, _) = cart_of(f, comm)?;
            let co: Vec<i64> = ints(f, "coords", coords, c.dims.len())?.iter().map(|&x| x as i64).collect();
            let r = c.rank(&co).ok_or_else(|| {
                MpiError::arg(ErrorClass::Arg, f, "coords", format!("{co:?}"), format!("outside the non-periodic grid {:?}", c.dims))
            })?;
            out(f, "rank", rank, r as c_int)
        })
    }

    fn MPI_Cart_coords / PMPI_Cart_coords(comm: usize, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int {
        let f = "MPI_Cart_coords";
        call(Scope::Comm(comm), || {
            let (c, _) = cart_of(f, comm)?;
            if rank < 0 || rank as usize >= c.size() {
                return Err(MpiError::arg(ErrorClass::Rank, f, "rank", rank, format!("the grid has {} processes", c.size())));
            }
            out_list(f, "coords", coords, maxdims, c.coords(rank as usize).into_iter().map(|x| x as c_int))
        })
    }

    fn MPI_Cart_shift / PMPI_Cart_shift(comm: usize, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) -> c_int {
        let f = "MPI_Cart_shift";
        call(Scope::Comm(comm), || {
            let (c, rank) = cart_of(f, comm)?;
            if direction < 0 || direction as usize >= c.dims.len() {
                return Err(MpiError::arg(ErrorClass::Arg, f, "direction", direction, format!("the grid has {} dimensions", c.dims.len())));
            }
            let (s, d) = c.shift(rank, direction as usize, disp as i64);
            out(f, "rank_source", rank_source, rank_or_null(s))?;
            out(f, "rank_dest", rank_dest, rank_or_null(d))
        })
    }

    fn MPI_Cart_sub / PMPI_Cart_sub(comm: usize, remain_dims: *const c_int, newcomm: *mut usize) -> c_int {
        let f = "MPI_Cart_sub";
        call(Scope::Comm(comm), || {
            let (c, _) = cart_of(f, comm)?;
            let keep: Vec<bool> = ints(f, "remain_dims", remain_dims, c.dims.len())?.iter().map(|&k| k != 0).collect();
            let new = topo::cart_sub(f, id_of(f, comm)?, &keep)?;
            out(f, "newcomm", newcomm, handle(f, Some(new))?)
        })
    }

    fn MPI_Graph_create / PMPI_Graph_create(comm_old: usize, nnodes: c_int, index: *const c_int, edges: *const c_int, reorder: c_int, comm_graph: *mut usize) -> c_int {
        let f = "MPI_Graph_create";
        let _ = reorder;
        call(Scope::Comm(comm_old), || {
            let n = count(f, "nnodes", nnodes as i64)? as usize;
            let index = indices(f, "index", ints(f, "index", index, n)?)?;
            let ne = index.last().copied().unwrap_or(0);
            let edges = indices(f, "edges", ints(f, "edges", edges, ne)?)?;
            let new = topo::graph_create(f, id_of(f, comm_old)?, index, edges)?;
            out(f, "comm_graph", comm_graph, handle(f, new)?)
        })
    }

    fn MPI_Graph_map / PMPI_Graph_map(comm: usize, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) -> c_int {
        let f = "MPI_Graph_map";
        let _ = (index, edges);
        call(Scope::Comm(comm), || {
            let n = count(f, "nnodes", nnodes as i64)? as usize;
            let (size, rank) = with_comm(f, comm, |rt, id| { let c = rt.comm(f, id)?; Ok((c.size(), c.rank)) })?;
            if n > size {
                return Err(MpiError::arg(ErrorClass::Arg, f, "nnodes", n, format!("more than the communicator's {size} processes")));
            }
            out(f, "newrank", newrank, if rank < n { rank as c_int } else { MPI_UNDEFINED })
        })
    }

    fn MPI_Graphdims_get / PMPI_Graphdims_get(comm: usize, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
        let f = "MPI_Graphdims_get";
        call(Scope::Comm(comm), || {
            let Topology::Graph { index, edges } = &*graph_of(f, comm)? else { unreachable!("checked by graph_of") };
            out(f, "nnodes", nnodes, index.len() as c_int)?;
            out(f, "nedges", nedges, edges.len() as c_int)
        })
    }

    fn MPI_Graph_get / PMPI_Graph_get(comm: usize, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) -> c_int {
        let f = "MPI_Graph_get";
        call(Scope::Comm(comm), || {
            let t = graph_of(f, comm)?;
            let Topology::Graph { index: ix, edges: ed } = &*t else { unreachable!("checked by graph_of") };
            out_list(f, "index", index, maxindex, ix.iter().map(|&x| x as c_int))?;
            out_list(f, "edges", edges, maxedges, ed.iter().map(|&x| x as c_int))
        })
    }

    fn MPI_Graph_neighbors_count / PMPI_Graph_neighbors_count(comm: usize, rank: c_int, nneighbors: *mut c_int) -> c_int {
        let f = "MPI_Graph_neighbors_count";
        call(Scope::Comm(comm), || {
            let n = node_neighbors(f, comm, rank)?;
            out(f, "nneighbors", nneighbors, n.len() as c_int)
        })
    }

    fn MPI_Graph_neighbors / PMPI_Graph_neighbors(comm: usize, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) -> c_int {
        let f = "MPI_Graph_neighbors";
        call(Scope::Comm(comm), || {
            let n = node_neighbors(f, comm, rank)?;
            out_list(f, "neighbors", neighbors, maxneighbors, n.into_iter().map(|x| x as c_int))
        })
    }

    fn MPI_Dist_graph_create_adjacent / PMPI_Dist_graph_create_adjacent(comm_old: usize, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, info: usize, reorder: c_int, comm_dist_graph: *mut usize) -> c_int {
        let f = "MPI_Dist_graph_create_adjacent";
        let _ = reorder;
        call(Scope::Comm(comm_old), || {
            crate::info::read(f, "info", info, true)?;
            let ni = count(f, "indegree", indegree as i64)? as usize;
            let no = count(f, "outdegree", outdegree as i64)? as usize;
            let sw = weights(f, "sourceweights", sourceweights, ni)?;
            let dw = weights(f, "destweights", destweights, no)?;
            let g = DistGraph {
                sources: indices(f, "sources", ints(f, "sources", sources, ni)?)?,
                destinations: indices(f, "destinations", ints(f, "destinations", destinations, no)?)?,
                weighted: sw.is_some() && dw.is_some(),
                source_weights: sw.unwrap_or_else(|| vec![1; ni]),
                destination_weights: dw.unwrap_or_else(|| vec![1; no]),
            };
            let new = topo::dist_graph_adjacent(f, id_of(f, comm_old)?, g)?;
            out(f, "comm_dist_graph", comm_dist_graph, handle(f, Some(new))?)
        })
    }

    fn MPI_Dist_graph_create / PMPI_Dist_graph_create(comm_old: usize, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights_arg: *const c_int, info: usize, reorder: c_int, comm_dist_graph: *mut usize) -> c_int {
        let f = "MPI_Dist_graph_create";
        let _ = reorder;
        call(Scope::Comm(comm_old), || {
            crate::info::read(f, "info", info, true)?;
            let n = count(f, "n", n as i64)? as usize;
            let src = indices(f, "sources", ints(f, "sources", sources, n)?)?;
            let deg = indices(f, "degrees", ints(f, "degrees", degrees, n)?)?;
            let total: usize = deg.iter().sum();
            let dst = indices(f, "destinations", ints(f, "destinations", destinations, total)?)?;
            let w = weights(f, "weights", weights_arg, total)?;
            let mut edges = Vec::with_capacity(total);
            let mut at = 0;
            for (&s, &d) in src.iter().zip(&deg) {
                for k in at..at + d {
                    edges.push((s, dst[k], w.as_ref().map_or(1, |w| w[k])));
                }
                at += d;
            }
            let new = topo::dist_graph_create(f, id_of(f, comm_old)?, &edges, w.is_some())?;
            out(f, "comm_dist_graph", comm_dist_graph, handle(f, Some(new))?)
        })
    }

    fn MPI_Dist_graph_neighbors_count / PMPI_Dist_graph_neighbors_count(comm: usize, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) -> c_int {
        let f = "MPI_Dist_graph_neighbors_count";
        call(Scope::Comm(comm), || {
            let g = dist_graph_of(f, comm)?;
            out(f, "indegree", indegree, g.sources.len() as c_int)?;
            out(f, "outdegree", outdegree, g.destinations.len() as c_int)?;
            out(f, "weighted", weighted, g.weighted as c_int)
        })
    }

    fn MPI_Dist_graph_neighbors / PMPI_Dist_graph_neighbors(comm: usize, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) -> c_int {
        let f = "MPI_Dist_graph_neighbors";
        call(Scope::Comm(comm), || {
            let g = dist_graph_of(f, comm)?;
            out_list(f, "sources", sources, maxindegree, g.sources.iter().map(|&x| x as c_int))?;
            out_list(f, "destinations", destinations, maxoutdegree, g.destinations.iter().map(|&x| x as c_int))?;
            if g.weighted && sourceweights as usize != MPI_UNWEIGHTED {
                out_list(f, "sourceweights", sourceweights, maxindegree, g.source_weights.iter().copied())?;
            }
            if g.weighted && destweights as usize != MPI_UNWEIGHTED {
                out_list(f, "destweights", destweights, maxoutdegree, g.destination_weights.iter().copied())?;
            }
            Ok(())
        })
    }

    fn MPI_Topo_test / PMPI_Topo_test(comm: usize, status: *mut c_int) -> c_int {
        let f = "MPI_Topo_test";
        call(Scope::Comm(comm), || {
            let kind = match topology(f, comm)?.0.as_deref() {
                Some(Topology::Cart(_)) => MPI_CART,
                Some(Topology::Graph { .. }) => MPI_GRAPH,
                Some(Topology::DistGraph(_)) => MPI_DIST_GRAPH,
                None => MPI_UNDEFINED,
            };
            out(f, "status", status, kind)
        })
    }
}
