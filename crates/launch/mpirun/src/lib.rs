//! The `mpirun`/`mpiexec` launcher.

/// Entry point of `mpirun` with its arguments (argv[0] excluded); returns the exit status.
pub fn main(_args: Vec<String>) -> i32 {
    eprintln!("mpirun: not built yet");
    1
}
