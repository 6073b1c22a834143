//! Dynamic processes and name publishing. Ports, accept/connect, join and disconnect
//! connect independently started jobs (`crossmpi_core::dynamic`). Spawning is not
//! supported yet: `MPI_Comm_get_parent` says there is no parent, spawning and names
//! fail with their error class (MPI_ERR_SPAWN, MPI_ERR_NAME / MPI_ERR_SERVICE) and a
//! message saying why, after checking their arguments.

use crate::comm::{handle, resolve};
use crate::consts::*;
use crate::error::{call, Scope};
use crate::info;
use crate::util::{in_string, out, out_string, slice};
use crossmpi_core::dynamic;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::runtime;
use std::os::fd::FromRawFd;
use std::os::raw::{c_char, c_int};

const FIXED: &str = "crossmpi jobs have a fixed set of processes, started by mpirun";

/// `MPI_MAX_PORT_NAME`.
const MAX_PORT_NAME: usize = 1024;

fn spawn_error(function: &str) -> MpiError {
    MpiError::context(
        ErrorClass::Spawn,
        function,
        format!("cannot start processes: {FIXED} (start them all with mpirun -np N, or join clusters with mpirun -client)"),
    )
}

/// The communicator argument of a collective dynamic-process call, checked.
fn check_comm(function: &str, comm: usize, root: c_int) -> MpiResult<()> {
    runtime::with(function, |rt| {
        let id = resolve(rt, function, comm)?;
        let size = rt.comm(function, id)?.size() as c_int;
        if !(0..size).contains(&root) {
            return Err(MpiError::arg(
                ErrorClass::Root,
                function,
                "root",
                root,
                format!("not a rank of the communicator (size {size})"),
            ));
        }
        Ok(())
    })
}

/// The arguments of accept and connect, checked: the communicator and the port name
/// (significant at the root only).
fn rendezvous_args(
    function: &str,
    port_name: *const c_char,
    info: usize,
    root: c_int,
    comm: usize,
    newcomm: *mut usize,
) -> MpiResult<(crossmpi_core::comm::CommId, String)> {
    check_comm(function, comm, root)?;
    info::read(function, "info", info, true)?;
    out(function, "newcomm", newcomm, MPI_COMM_NULL)?;
    runtime::with(function, |rt| {
        let id = resolve(rt, function, comm)?;
        let port = if rt.comm(function, id)?.rank == root as usize {
            in_string(function, "port_name", port_name)?
        } else {
            String::new()
        };
        Ok((id, port))
    })
}

fn check_spawn(
    function: &str,
    maxprocs: &[c_int],
    root: c_int,
    comm: usize,
    intercomm: *mut usize,
) -> MpiResult<()> {
    check_comm(function, comm, root)?;
    if let Some(&n) = maxprocs.iter().find(|&&n| n <= 0) {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "maxprocs",
            n,
            "must be positive",
        ));
    }
    out(function, "intercomm", intercomm, MPI_COMM_NULL)?;
    Err(spawn_error(function))
}

export! {
    fn MPI_Comm_get_parent / PMPI_Comm_get_parent(parent: *mut usize) -> c_int {
        let f = "MPI_Comm_get_parent";
        call(Scope::Process, || {
            runtime::with(f, |_| Ok(()))?;
            out(f, "parent", parent, MPI_COMM_NULL)
        })
    }

    /// Waits for every member (a barrier, so messages sent before it were matched by
    /// receives the members completed) and frees the communicator.
    fn MPI_Comm_disconnect / PMPI_Comm_disconnect(comm: *mut usize) -> c_int {
        let f = "MPI_Comm_disconnect";
        let h = if comm.is_null() { MPI_COMM_NULL } else {
            // SAFETY: non-null MPI_Comm* argument (C ABI contract).
            unsafe { *comm }
        };
        let rc = call(Scope::Comm(h), || {
            slice(f, "comm", comm as *const usize, 1)?;
            if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
                return Err(MpiError::arg(ErrorClass::Comm, f, "comm", crate::handle::describe(h), "predefined communicators cannot be disconnected"));
            }
            let id = runtime::with(f, |rt| resolve(rt, f, h))?;
            dynamic::disconnect(f, id)
        });
        if rc != MPI_SUCCESS {
            return rc;
        }
        crate::comm::PMPI_Comm_free(comm)
    }

    fn MPI_Comm_spawn / PMPI_Comm_spawn(command: *const c_char, argv: *mut *mut c_char, maxprocs: c_int, info: usize, root: c_int, comm: usize, intercomm: *mut usize, array_of_errcodes: *mut c_int) -> c_int {
        let f = "MPI_Comm_spawn";
        let _ = (argv, array_of_errcodes);
        call(Scope::Comm(comm), || {
            in_string(f, "command", command)?;
            info::read(f, "info", info, true)?;
            check_spawn(f, &[maxprocs], root, comm, intercomm)
        })
    }

    fn MPI_Comm_spawn_multiple / PMPI_Comm_spawn_multiple(count: c_int, array_of_commands: *mut *mut c_char, array_of_argv: *mut *mut *mut c_char, array_of_maxprocs: *const c_int, array_of_info: *const usize, root: c_int, comm: usize, intercomm: *mut usize, array_of_errcodes: *mut c_int) -> c_int {
        let f = "MPI_Comm_spawn_multiple";
        let _ = (array_of_argv, array_of_errcodes);
        call(Scope::Comm(comm), || {
            if count <= 0 {
                return Err(MpiError::arg(ErrorClass::Arg, f, "count", count, "must be positive"));
            }
            let n = count as usize;
            for &c in slice(f, "array_of_commands", array_of_commands as *const *mut c_char, n)? {
                in_string(f, "array_of_commands", c)?;
            }
            for &i in slice(f, "array_of_info", array_of_info, n)? {
                info::read(f, "array_of_info", i, true)?;
            }
            let maxprocs = slice(f, "array_of_maxprocs", array_of_maxprocs, n)?;
            check_spawn(f, maxprocs, root, comm, intercomm)
        })
    }

    fn MPI_Open_port / PMPI_Open_port(info: usize, port_name: *mut c_char) -> c_int {
        let f = "MPI_Open_port";
        call(Scope::Process, || {
            info::read(f, "info", info, true)?;
            slice(f, "port_name", port_name as *const c_char, 1)?;
            let name = dynamic::open_port(f)?;
            out_string(f, "port_name", port_name, std::ptr::null_mut(), &name, MAX_PORT_NAME)
        })
    }

    fn MPI_Close_port / PMPI_Close_port(port_name: *const c_char) -> c_int {
        let f = "MPI_Close_port";
        call(Scope::Process, || {
            let name = in_string(f, "port_name", port_name)?;
            dynamic::close_port(f, &name)
        })
    }

    fn MPI_Comm_accept / PMPI_Comm_accept(port_name: *const c_char, info: usize, root: c_int, comm: usize, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_accept";
        call(Scope::Comm(comm), || {
            let (id, port) = rendezvous_args(f, port_name, info, root, comm, newcomm)?;
            let new = dynamic::accept(f, &port, id, root as usize)?;
            out(f, "newcomm", newcomm, handle(f, Some(new))?)
        })
    }

    fn MPI_Comm_connect / PMPI_Comm_connect(port_name: *const c_char, info: usize, root: c_int, comm: usize, newcomm: *mut usize) -> c_int {
        let f = "MPI_Comm_connect";
        call(Scope::Comm(comm), || {
            let (id, port) = rendezvous_args(f, port_name, info, root, comm, newcomm)?;
            let new = dynamic::connect(f, &port, id, root as usize)?;
            out(f, "newcomm", newcomm, handle(f, Some(new))?)
        })
    }

    fn MPI_Comm_join / PMPI_Comm_join(fd: c_int, intercomm: *mut usize) -> c_int {
        let f = "MPI_Comm_join";
        call(Scope::Process, || {
            out(f, "intercomm", intercomm, MPI_COMM_NULL)?;
            // The socket stays the caller's: join talks over a duplicate.
            // SAFETY: dup only reads the descriptor number; a bad one fails with EBADF.
            let copy = unsafe { libc::dup(fd) };
            if fd < 0 || copy < 0 {
                return Err(MpiError::arg(ErrorClass::Arg, f, "fd", fd, "not an open descriptor"));
            }
            // SAFETY: `copy` is a descriptor this call just created and nothing else owns.
            let stream = unsafe { std::net::TcpStream::from_raw_fd(copy) };
            let new = dynamic::join(f, fd, stream)?;
            out(f, "intercomm", intercomm, handle(f, Some(new))?)
        })
    }

    fn MPI_Publish_name / PMPI_Publish_name(service_name: *const c_char, info: usize, port_name: *const c_char) -> c_int {
        let f = "MPI_Publish_name";
        call(Scope::Process, || {
            let service = in_string(f, "service_name", service_name)?;
            in_string(f, "port_name", port_name)?;
            info::read(f, "info", info, true)?;
            Err(MpiError::arg(ErrorClass::Name, f, "service_name", service, format!("no name service: {FIXED}")))
        })
    }

    fn MPI_Unpublish_name / PMPI_Unpublish_name(service_name: *const c_char, info: usize, port_name: *const c_char) -> c_int {
        let f = "MPI_Unpublish_name";
        call(Scope::Process, || {
            let service = in_string(f, "service_name", service_name)?;
            in_string(f, "port_name", port_name)?;
            info::read(f, "info", info, true)?;
            Err(MpiError::arg(ErrorClass::Service, f, "service_name", service, "was never published"))
        })
    }

    fn MPI_Lookup_name / PMPI_Lookup_name(service_name: *const c_char, info: usize, port_name: *mut c_char) -> c_int {
        let f = "MPI_Lookup_name";
        call(Scope::Process, || {
            let service = in_string(f, "service_name", service_name)?;
            info::read(f, "info", info, true)?;
            slice(f, "port_name", port_name as *const c_char, 1)?;
            Err(MpiError::arg(ErrorClass::Name, f, "service_name", service, "not published (nothing can be published in a job of fixed processes)"))
        })
    }
}
