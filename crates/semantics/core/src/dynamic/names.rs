//! `MPI_Publish_name`, `MPI_Lookup_name`, `MPI_Unpublish_name` through the launcher's
//! name service (PMI-1 `publish_name`, `lookup_name`, `unpublish_name`). With crossmpi's
//! mpirun, names are visible to every process of that mpirun (spawned ones included)
//! and to nothing else.

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::runtime;
use crossmpi_pmi::wire::is_token;
use crossmpi_pmi::Client;

/// Longest service name: the launcher carries it as one word of a line.
const MAX_SERVICE: usize = 256;
/// Longest port name (`MPI_MAX_PORT_NAME`).
const MAX_PORT: usize = 1024;

/// The launcher carries names and ports as single words of a line.
fn check_word(
    function: &str,
    class: ErrorClass,
    arg: &str,
    value: &str,
    max: usize,
) -> MpiResult<()> {
    if is_token(value) && value.len() <= max {
        return Ok(());
    }
    Err(MpiError::arg(
        class,
        function,
        arg,
        format!("{value:?}"),
        format!("must be 1 to {max} bytes without spaces, tabs or newlines"),
    ))
}

fn with_service<R>(
    function: &str,
    class: ErrorClass,
    service: &str,
    f: impl FnOnce(&mut Client) -> Result<R, crossmpi_pmi::Error>,
) -> MpiResult<R> {
    let err = |why: String| MpiError::arg(class, function, "service_name", service, why);
    check_word(
        function,
        ErrorClass::Name,
        "service_name",
        service,
        MAX_SERVICE,
    )?;
    runtime::with(function, |rt| match rt.pmi.as_mut() {
        None => Err(err(
            "no name service: this process runs as a singleton, without mpirun".into(),
        )),
        Some(pmi) => f(pmi).map_err(|e| err(format!("the launcher's name service says {e}"))),
    })
}

pub fn publish(function: &str, service: &str, port: &str) -> MpiResult<()> {
    check_word(function, ErrorClass::Port, "port_name", port, MAX_PORT)?;
    with_service(function, ErrorClass::Name, service, |p| {
        p.publish_name(service, port)
    })
}

pub fn unpublish(function: &str, service: &str) -> MpiResult<()> {
    with_service(function, ErrorClass::Service, service, |p| {
        p.unpublish_name(service)
    })
}

pub fn lookup(function: &str, service: &str) -> MpiResult<String> {
    with_service(function, ErrorClass::Name, service, |p| {
        p.lookup_name(service)
    })
}
