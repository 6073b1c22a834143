use std::fmt;

/// A PMI failure: which PMI command (or environment step) failed and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    command: &'static str,
    what: String,
}

impl Error {
    pub fn new(command: &'static str, what: String) -> Error {
        Error { command, what }
    }

    /// The PMI command (`put`, `barrier_in`, ...) or setup step (`PMI_FD`) that failed.
    pub fn command(&self) -> &'static str {
        self.command
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PMI {}: {}", self.command, self.what)
    }
}

impl std::error::Error for Error {}
