//! The IMPI server.

/// Entry point of `impi-server` with its arguments (argv[0] excluded); returns the exit status.
pub fn main(_args: Vec<String>) -> i32 {
    eprintln!("impi-server: not built yet");
    1
}
