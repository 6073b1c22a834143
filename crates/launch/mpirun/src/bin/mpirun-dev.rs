//! `mpirun` as its own binary, for this crate's integration tests (the installed
//! `mpirun` is the multi-call `crossmpi` binary, which the tests cannot name).

fn main() {
    std::process::exit(crossmpi_mpirun::main(std::env::args().skip(1).collect()));
}
