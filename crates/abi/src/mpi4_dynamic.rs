//! Dynamic processes and name publishing (`crossmpi_core::dynamic`): ports,
//! accept/connect, join and disconnect between jobs; spawning and the name service
//! through the launcher (PMI-1 `mcmd=spawn`, `publish_name`, `lookup_name`,
//! `unpublish_name`).

use crate::comm::{handle, resolve};
use crate::consts::*;
use crate::error::{call, Scope};
use crate::info;
use crate::util::{in_string, out, out_string, slice};
use crossmpi_core::dynamic;
use crossmpi_core::dynamic::spawn::SpawnCommand;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::runtime;
use std::os::fd::FromRawFd;
use std::os::raw::{c_char, c_int};

/// `MPI_MAX_PORT_NAME`.
const MAX_PORT_NAME: usize = 1024;
/// Most words an argv of a spawn may have before its NULL: far above any real command
/// line, and a bound on reading an argv that lacks its NULL.
const MAX_ARGV_WORDS: usize = 1 << 16;

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

/// A NULL-terminated argv (`MPI_ARGV_NULL`: no arguments).
fn argv_words(function: &str, arg: &str, argv: *const *mut c_char) -> MpiResult<Vec<String>> {
    let mut words = Vec::new();
    if argv.is_null() {
        return Ok(words);
    }
    for i in 0..MAX_ARGV_WORDS {
        // SAFETY: a non-null argv of the spawn functions is an array of C strings ended
        // by NULL (C ABI contract); reading stops at that NULL.
        let w = unsafe { *argv.add(i) };
        if w.is_null() {
            return Ok(words);
        }
        words.push(in_string(function, arg, w)?);
    }
    Err(MpiError::arg(
        ErrorClass::Spawn,
        function,
        arg,
        format!("{} words", MAX_ARGV_WORDS),
        "has no NULL terminator",
    ))
}

/// One command of a spawn, its arguments checked (at the root).
fn spawn_command(
    function: &str,
    (command_arg, command): (&str, *const c_char),
    (argv_arg, argv): (&str, *const *mut c_char),
    (maxprocs_arg, maxprocs): (&str, c_int),
    (info_arg, info): (&str, usize),
) -> MpiResult<SpawnCommand> {
    let spawn_arg = |arg: &str, value: &dyn std::fmt::Display, why: &str| {
        MpiError::arg(ErrorClass::Spawn, function, arg, value, why)
    };
    if command.is_null() {
        return Err(spawn_arg(
            command_arg,
            &"NULL",
            "a program to start is required",
        ));
    }
    let program = in_string(function, command_arg, command)?;
    if program.is_empty() {
        return Err(spawn_arg(
            command_arg,
            &"\"\"",
            "a program to start is required",
        ));
    }
    if maxprocs <= 0 {
        return Err(spawn_arg(maxprocs_arg, &maxprocs, "must be positive"));
    }
    Ok(SpawnCommand {
        command: program,
        args: argv_words(function, argv_arg, argv)?,
        maxprocs: maxprocs as usize,
        info: info::read(function, info_arg, info, true)?,
    })
}

/// Spawns, stores the intercommunicator and fills `array_of_errcodes`: `MPI_SUCCESS` for
/// every child at every member, or `MPI_ERR_SPAWN` for every requested process at the
/// root when the spawn failed after its arguments were found valid.
fn spawn_and_report(
    function: &str,
    commands: impl FnOnce() -> MpiResult<Vec<SpawnCommand>>,
    root: c_int,
    comm: usize,
    intercomm: *mut usize,
    errcodes: *mut c_int,
) -> MpiResult<()> {
    check_comm(function, comm, root)?;
    out(function, "intercomm", intercomm, MPI_COMM_NULL)?;
    let id = runtime::with(function, |rt| resolve(rt, function, comm))?;
    let mut requested = None;
    let counted = || {
        let cmds = commands()?;
        requested = Some(cmds.iter().map(|c| c.maxprocs).sum::<usize>());
        Ok(cmds)
    };
    let fill = |n: usize, code: c_int| {
        if !errcodes.is_null() {
            // SAFETY: a non-null array_of_errcodes holds one int per process the call
            // starts or, at the root, asks for (C ABI contract); `n` is that number.
            unsafe { std::slice::from_raw_parts_mut(errcodes, n) }.fill(code);
        }
    };
    let new = match dynamic::spawn::spawn(function, counted, id, root as usize) {
        Ok(new) => new,
        Err(e) => {
            if let Some(n) = requested {
                fill(n, MPI_ERR_SPAWN);
            }
            return Err(e);
        }
    };
    let children = runtime::with(function, |rt| {
        Ok(rt.comm(function, new)?.peer_group().members.len())
    })?;
    fill(children, MPI_SUCCESS);
    out(
        function,
        "intercomm",
        intercomm,
        handle(function, Some(new))?,
    )
}

export! {
    fn MPI_Comm_get_parent / PMPI_Comm_get_parent(parent: *mut usize) -> c_int {
        let f = "MPI_Comm_get_parent";
        call(Scope::Process, || {
            let id = dynamic::spawn::parent(f)?;
            out(f, "parent", parent, handle(f, id)?)
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

    /// The command, argv, maxprocs and info are read at the root only.
    fn MPI_Comm_spawn / PMPI_Comm_spawn(command: *const c_char, argv: *mut *mut c_char, maxprocs: c_int, info: usize, root: c_int, comm: usize, intercomm: *mut usize, array_of_errcodes: *mut c_int) -> c_int {
        let f = "MPI_Comm_spawn";
        call(Scope::Comm(comm), || {
            let commands = || {
                spawn_command(f, ("command", command), ("argv", argv), ("maxprocs", maxprocs), ("info", info))
                    .map(|c| vec![c])
            };
            spawn_and_report(f, commands, root, comm, intercomm, array_of_errcodes)
        })
    }

    /// The count and the arrays are read at the root only.
    fn MPI_Comm_spawn_multiple / PMPI_Comm_spawn_multiple(count: c_int, array_of_commands: *mut *mut c_char, array_of_argv: *mut *mut *mut c_char, array_of_maxprocs: *const c_int, array_of_info: *const usize, root: c_int, comm: usize, intercomm: *mut usize, array_of_errcodes: *mut c_int) -> c_int {
        let f = "MPI_Comm_spawn_multiple";
        call(Scope::Comm(comm), || {
            let commands = || {
                if count <= 0 {
                    return Err(MpiError::arg(ErrorClass::Spawn, f, "count", count, "must be positive"));
                }
                let n = count as usize;
                let programs = slice(f, "array_of_commands", array_of_commands as *const *mut c_char, n)?;
                let maxprocs = slice(f, "array_of_maxprocs", array_of_maxprocs, n)?;
                let infos = slice(f, "array_of_info", array_of_info, n)?;
                let argvs: &[*mut *mut c_char] = if array_of_argv.is_null() {
                    &[]
                } else {
                    slice(f, "array_of_argv", array_of_argv as *const *mut *mut c_char, n)?
                };
                (0..n)
                    .map(|i| {
                        let argv = argvs.get(i).copied().unwrap_or(std::ptr::null_mut());
                        spawn_command(
                            f,
                            (&format!("array_of_commands[{i}]"), programs[i]),
                            (&format!("array_of_argv[{i}]"), argv),
                            (&format!("array_of_maxprocs[{i}]"), maxprocs[i]),
                            (&format!("array_of_info[{i}]"), infos[i]),
                        )
                    })
                    .collect()
            };
            spawn_and_report(f, commands, root, comm, intercomm, array_of_errcodes)
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
            let port = in_string(f, "port_name", port_name)?;
            info::read(f, "info", info, true)?;
            dynamic::names::publish(f, &service, &port)
        })
    }

    fn MPI_Unpublish_name / PMPI_Unpublish_name(service_name: *const c_char, info: usize, port_name: *const c_char) -> c_int {
        let f = "MPI_Unpublish_name";
        call(Scope::Process, || {
            let service = in_string(f, "service_name", service_name)?;
            in_string(f, "port_name", port_name)?;
            info::read(f, "info", info, true)?;
            dynamic::names::unpublish(f, &service)
        })
    }

    fn MPI_Lookup_name / PMPI_Lookup_name(service_name: *const c_char, info: usize, port_name: *mut c_char) -> c_int {
        let f = "MPI_Lookup_name";
        call(Scope::Process, || {
            let service = in_string(f, "service_name", service_name)?;
            info::read(f, "info", info, true)?;
            slice(f, "port_name", port_name as *const c_char, 1)?;
            let port = dynamic::names::lookup(f, &service)?;
            out_string(f, "port_name", port_name, std::ptr::null_mut(), &port, MAX_PORT_NAME)
        })
    }
}
