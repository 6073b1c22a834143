//! Surviving a relay's death (docs/impi-relay.md, "Surviving a relay's death"): the
//! startup mark and what every party derives from the final tables.
//!
//! A relay of a cluster with K >= 2 trunks appends the version entry "CXRS".K to its
//! client's IMPI_C_VERSION going out (unless `CROSSMPI_RELAY_SURVIVE=0`). The job is
//! **survivable** when every client lists crossmpi's version (crossmpi ends keep copies
//! of what they send and resend it) and at least one lists the mark. The hosts of a
//! marked client are its relays: losing one of them while another lives is not fatal,
//! its processes are taken over by the next live host of that client.

/// The version entry (major "CXRS", minor K) a trunked cluster's relays append to their
/// client's IMPI_C_VERSION (the IMPI route and server read the same value;
/// `GlobalTables::survivable` says whether a job is survivable).
pub use crossmpi_impi::wire::tables::SURVIVAL_MAJOR as SURVIVE_MAJOR;

/// Default of `CROSSMPI_RELAY_SURVIVE`: mark a trunked cluster survivable. Turning it
/// off spares the ends the copy of every packet they send and the memory the copies
/// hold until acknowledged.
pub const DEFAULT_SURVIVE: bool = true;
