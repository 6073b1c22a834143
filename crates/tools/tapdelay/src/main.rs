//! User-space delay line for crossmpi lab.
fn main() {}
