//! The library is installed as `libmpi_abi.so.1` (MPI 5.0 standard ABI, major version 1):
//! record that soname so programs linked against it load the ABI-compatible file.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi_abi.so.1");
}
