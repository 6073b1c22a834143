//! Surviving a relay's death (docs/impi-relay.md, "Surviving a relay's death"): the
//! startup mark and what every party derives from the final tables.
//!
//! A relay of a cluster with K >= 2 trunks appends the version entry "CXRS".K to its
//! client's IMPI_C_VERSION going out (unless `CROSSMPI_RELAY_SURVIVE=0`). The job is
//! **survivable** when every client lists crossmpi's version (crossmpi ends keep copies
//! of what they send and resend it) and at least one lists the mark. The hosts of a
//! marked client are its relays: losing one of them while another lives is not fatal,
//! its processes are taken over by the next live host of that client.

use crate::rewrite::CROSSMPI_MAJOR;
use crossmpi_impi::wire::tables::GlobalTables;

/// The version entry (major "CXRS", minor K) a trunked cluster's relays append to their
/// client's IMPI_C_VERSION (the IMPI route and server read the same value).
pub use crossmpi_impi::wire::tables::SURVIVAL_MAJOR as SURVIVE_MAJOR;

/// Default of `CROSSMPI_RELAY_SURVIVE`: mark a trunked cluster survivable. Turning it
/// off spares the ends the copy of every packet they send and the memory the copies
/// hold until acknowledged.
pub const DEFAULT_SURVIVE: bool = true;

/// Whether client `c` of `tables` lists the mark: its hosts are relays.
pub fn marked(tables: &GlobalTables, c: usize) -> bool {
    tables.clients[c]
        .versions
        .iter()
        .any(|v| v.major == SURVIVE_MAJOR)
}

/// Every client lists crossmpi and at least one the mark.
pub fn survivable(tables: &GlobalTables) -> bool {
    let crossmpi = tables
        .clients
        .iter()
        .all(|c| c.versions.iter().any(|v| v.major == CROSSMPI_MAJOR));
    crossmpi && (0..tables.clients.len()).any(|c| marked(tables, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossmpi_impi::wire::tables::Version;

    #[test]
    fn a_job_is_survivable_when_all_are_crossmpi_and_one_is_marked() {
        let v = |major, minor| Version { major, minor };
        let c = crate::testing::cluster(&[1], (1, 2));
        let mut t = GlobalTables {
            clients: vec![c.clone(), c],
        };
        let base = v(0, 0);
        let cx = v(CROSSMPI_MAJOR, 1);
        let rs = v(SURVIVE_MAJOR, 2);
        let mut set = |a: Vec<Version>, b: Vec<Version>| {
            t.clients[0].versions = a;
            t.clients[1].versions = b;
            (survivable(&t), marked(&t, 0), marked(&t, 1))
        };
        assert_eq!(set(vec![base, cx, rs], vec![base, cx]), (true, true, false));
        assert_eq!(set(vec![base, cx], vec![base, cx, rs]), (true, false, true));
        // A client that is not crossmpi cannot resend: nothing survives.
        assert_eq!(set(vec![base, cx, rs], vec![base]), (false, true, false));
        // No trunked cluster marked: nothing to survive.
        assert_eq!(set(vec![base, cx], vec![base, cx]), (false, false, false));
    }
}
