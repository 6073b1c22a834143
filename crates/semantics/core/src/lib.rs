//! MPI semantics: the runtime of one MPI process.
