//! Binding ranks to processors (`CROSSMPI_BIND`).
//!
//! On a node with more ranks than processors the ranks take turns, and where the
//! scheduler puts them changes from run to run: moving a rank between processors, or
//! three ranks sharing one while another runs one, made the same job take one of two
//! times (the CG kernel on 4 ranks and 2 cores: 0.092-0.099 s or 0.118-0.141 s, half of
//! the runs each). Bound in blocks (local ranks 0 and 1 on the first processor, 2 and 3
//! on the second), every run took the fast time, and so did most collectives (8 ranks,
//! 64 KiB broadcast 39 -> 27 us, 1 MiB 528 -> 404 us): neighbouring ranks, which
//! exchange the most in most codes and in the binomial trees' last rounds, share a
//! processor's caches and wake each other without a migration. Round-robin placement
//! (local rank i on processor i mod n) was as stable but slower for trees (4 ranks,
//! 1 MiB broadcast 388 against 203 us).
//!
//! A node whose ranks take every processor (as many ranks as processors) binds too, one
//! rank per processor, as Open MPI does up to 2 ranks: left to the scheduler, a rank
//! moved between the processors now and then, and the compute-bound kernels took 0.5-1 %
//! longer (2 ranks on 2 processors, 9-11 interleaved runs, medians: cg 0.0601 -> 0.0596 s,
//! fft3d 0.1972 -> 0.1960; Open MPI 0.0597 and 0.1963). A node with processors to spare
//! is left to the scheduler: binding would be wrong when other jobs share the machine
//! (two one-rank jobs would both take the first processor).

/// `CROSSMPI_BIND`: when a rank binds itself to one processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// `auto` (default): when the node holds at least as many ranks as processors.
    Auto,
    /// `none`: never.
    Never,
    /// `core`: always.
    Always,
}

impl Binding {
    /// Parses a `CROSSMPI_BIND` value (None: unset); Err names what is accepted.
    pub fn from_var(value: Option<&str>) -> Result<Binding, String> {
        match value.map(str::trim) {
            None | Some("") | Some("auto") => Ok(Binding::Auto),
            Some("none") => Ok(Binding::Never),
            Some("core") => Ok(Binding::Always),
            Some(other) => Err(format!("CROSSMPI_BIND={other:?}: use auto, none or core")),
        }
    }

    /// Whether a rank of a node whose ranks take (or do not take) every processor binds.
    pub fn applies(self, node_full: bool) -> bool {
        match self {
            Binding::Auto => node_full,
            Binding::Never => false,
            Binding::Always => true,
        }
    }
}

/// The processor of local rank `local` of `locals`, among the processors `cpus` it may
/// run on: consecutive local ranks in equal blocks, in order.
pub fn block_cpu(local: usize, locals: usize, cpus: &[usize]) -> Option<usize> {
    if cpus.is_empty() || locals == 0 || local >= locals {
        return None;
    }
    Some(cpus[local * cpus.len() / locals])
}

/// Binds this process to local rank `local`'s processor (see [`block_cpu`]) among those
/// it may run on now. The error of a failed system call is returned for the caller to
/// report: the job then runs unbound.
pub fn bind(local: usize, locals: usize) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain bits, valid zeroed; the calls get and set the mask of
    // this process (pid 0) through a pointer to a local set of the size passed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let allowed: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        // SAFETY: cpu < CPU_SETSIZE, within the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect();
    let Some(cpu) = block_cpu(local, locals, &allowed) else {
        return Ok(());
    };
    // SAFETY: as above; cpu < CPU_SETSIZE.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut one) };
    if unsafe { libc::sched_setaffinity(0, size, &one) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_neighbours_in_order() {
        let two = [0, 1];
        let placed: Vec<_> = (0..4).map(|l| block_cpu(l, 4, &two).unwrap()).collect();
        assert_eq!(placed, [0, 0, 1, 1]);
        let placed: Vec<_> = (0..8).map(|l| block_cpu(l, 8, &two).unwrap()).collect();
        assert_eq!(placed, [0, 0, 0, 0, 1, 1, 1, 1]);
        // uneven: 3 ranks on 2 processors, an allowed set that is not 0..n
        let placed: Vec<_> = (0..3).map(|l| block_cpu(l, 3, &[2, 5]).unwrap()).collect();
        assert_eq!(placed, [2, 2, 5]);
        // fewer ranks than processors: spread out
        assert_eq!(block_cpu(1, 2, &[0, 1, 2, 3]), Some(2));
        assert_eq!(block_cpu(0, 0, &two), None);
        assert_eq!(block_cpu(4, 4, &two), None);
        assert_eq!(block_cpu(0, 1, &[]), None);
    }

    #[test]
    fn values_of_the_variable() {
        assert_eq!(Binding::from_var(None), Ok(Binding::Auto));
        assert_eq!(Binding::from_var(Some(" core ")), Ok(Binding::Always));
        assert_eq!(Binding::from_var(Some("none")), Ok(Binding::Never));
        assert!(Binding::from_var(Some("socket"))
            .unwrap_err()
            .contains("auto, none or core"));
        assert!(Binding::Auto.applies(true) && !Binding::Auto.applies(false));
        assert!(Binding::Always.applies(false) && !Binding::Never.applies(true));
    }
}
