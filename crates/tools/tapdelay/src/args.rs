//! Command line of `crossmpi-tapdelay`, parsed with errors that name the argument and
//! the value.

use crate::queue::LinkConfig;

pub const USAGE: &str = "usage: crossmpi-tapdelay NETNS_A:TAP_A NETNS_B:TAP_B --delay-us N \
[--loss PERCENT] [--seed N] [--rate-mbit N] [--max-backlog-us N] [--vnet] \
[--link NETNS_C:TAP_C NETNS_D:TAP_D --delay-us N ...]...";

/// One emulated link: a TAP in each of two namespaces and how frames cross it.
#[derive(Debug, PartialEq)]
pub struct LinkSpec {
    pub a: (String, String),
    pub b: (String, String),
    pub vnet: bool,
    pub seed: u64,
    pub link: LinkConfig,
}

/// Everything one delay-line process needs: the links it serves (one process serves
/// them all, so a frame that crosses two of them is picked up by the second one as
/// soon as the first hands it to the kernel, without a second process waking up).
#[derive(Debug, PartialEq)]
pub struct Options {
    pub links: Vec<LinkSpec>,
    /// How long before a frame is due the loop stops sleeping and polls instead.
    pub spin_ns: u64,
}

/// Memory per direction, in MiB: 256 MiB holds about 4000 full 64 KiB segments, i.e.
/// 2 s of traffic at 1 Gbit/s or 0.2 s at 10 Gbit/s, more than a link with the lab's
/// longest delay (50 ms one-way) keeps in flight. It is allocated only as frames wait.
const DEFAULT_QUEUE_MB: u64 = 256;
/// Timer wake-ups in a VM come 20-100 µs late; polling through the last 100 µs
/// before a frame is due makes it leave on time, at the cost of CPU only then.
const DEFAULT_SPIN_US: u64 = 100;
/// A 20 ms router buffer, the common rule of thumb for WAN routers.
const DEFAULT_MAX_BACKLOG_US: u64 = 20_000;

fn endpoint(arg: &str) -> Result<(String, String), String> {
    match arg.split_once(':') {
        Some((ns, tap)) if !ns.is_empty() && !tap.is_empty() && tap.len() <= 15 => {
            Ok((ns.to_string(), tap.to_string()))
        }
        _ => Err(format!(
            "crossmpi-tapdelay: endpoint {arg:?} is not NETNS:TAP (TAP at most 15 bytes)"
        )),
    }
}

fn number<T: std::str::FromStr>(flag: &str, value: Option<&String>) -> Result<T, String> {
    let value = value.ok_or_else(|| format!("crossmpi-tapdelay: {flag} needs a value"))?;
    value
        .parse()
        .map_err(|_| format!("crossmpi-tapdelay: {flag} value {value:?} is not a valid number"))
}

/// Frame buffer size: a full 64 KiB GSO segment with its Ethernet and VLAN headers
/// and the vnet header (a short buffer would truncate the frame), or a jumbo frame
/// when offloads are off.
pub fn frame_buffer_len(vnet: bool) -> usize {
    if vnet {
        65_536 + 256 + crate::tap::VNET_HDR_LEN
    } else {
        9_216
    }
}

/// The environment variables that tune the delay line (None: not set).
#[derive(Default)]
pub struct Tunables<'a> {
    /// CROSSMPI_TAPDELAY_QUEUE_MB: memory per direction.
    pub queue_mb: Option<&'a str>,
    /// CROSSMPI_TAPDELAY_SPIN_US: polling time before a frame is due.
    pub spin_us: Option<&'a str>,
}

fn tunable(name: &str, value: Option<&str>, default: u64, max: u64) -> Result<u64, String> {
    match value {
        None => Ok(default),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(format!(
                "crossmpi-tapdelay: {name} value {v:?} is not in 0..{max}"
            )),
        },
    }
}

pub fn parse(args: &[String], env: &Tunables) -> Result<Options, String> {
    let queue_mb = tunable(
        "CROSSMPI_TAPDELAY_QUEUE_MB",
        env.queue_mb,
        DEFAULT_QUEUE_MB,
        65_536,
    )?;
    if queue_mb == 0 {
        return Err(
            "crossmpi-tapdelay: CROSSMPI_TAPDELAY_QUEUE_MB value \"0\" is not in 1..65536".into(),
        );
    }
    let spin_us = tunable(
        "CROSSMPI_TAPDELAY_SPIN_US",
        env.spin_us,
        DEFAULT_SPIN_US,
        10_000,
    )?;
    let links = args
        .split(|a| a == "--link")
        .enumerate()
        .map(|(i, group)| parse_link(i + 1, group, queue_mb as usize))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Options {
        links,
        spin_ns: spin_us * 1_000,
    })
}

/// One link's arguments (`index` counts links from 1, for the error messages).
fn parse_link(index: usize, args: &[String], queue_mb: usize) -> Result<LinkSpec, String> {
    let mut positional = Vec::new();
    let (mut delay_us, mut loss_pct, mut seed) = (None, 0.0f64, 1u64);
    let (mut rate_mbit, mut backlog_us, mut vnet) = (None::<f64>, DEFAULT_MAX_BACKLOG_US, false);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--delay-us" => delay_us = Some(number::<u64>(arg, it.next())?),
            "--loss" => loss_pct = number(arg, it.next())?,
            "--seed" => seed = number(arg, it.next())?,
            "--rate-mbit" => rate_mbit = Some(number(arg, it.next())?),
            "--max-backlog-us" => backlog_us = number(arg, it.next())?,
            "--vnet" => vnet = true,
            s if s.starts_with("--") => {
                return Err(format!("crossmpi-tapdelay: unknown option {s:?}\n{USAGE}"))
            }
            _ => positional.push(arg.clone()),
        }
    }
    let [a, b] = positional.as_slice() else {
        return Err(format!(
            "crossmpi-tapdelay: link {index}: expected two endpoints, got {positional:?}\n{USAGE}"
        ));
    };
    let delay_us = delay_us.ok_or_else(|| {
        format!("crossmpi-tapdelay: link {index}: --delay-us is required\n{USAGE}")
    })?;
    if !(0.0..=100.0).contains(&loss_pct) {
        return Err(format!(
            "crossmpi-tapdelay: link {index}: --loss value {loss_pct} is not a percentage in [0, 100]"
        ));
    }
    let rate_bps = match rate_mbit {
        Some(r) if !(r > 0.0 && r <= 1e6) => {
            return Err(format!(
                "crossmpi-tapdelay: link {index}: --rate-mbit value {r} is not in (0, 1000000]"
            ))
        }
        Some(r) => Some((r * 1e6) as u64),
        None => None,
    };
    Ok(LinkSpec {
        a: endpoint(a)?,
        b: endpoint(b)?,
        vnet,
        seed,
        link: LinkConfig {
            delay_ns: delay_us * 1_000,
            loss: loss_pct / 100.0,
            rate_bps,
            max_backlog_ns: backlog_us * 1_000,
            header_bytes: if vnet { crate::tap::VNET_HDR_LEN } else { 0 },
            max_frames: (queue_mb << 20) / frame_buffer_len(vnet),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(mb: &str) -> Tunables<'_> {
        Tunables {
            queue_mb: Some(mb),
            spin_us: None,
        }
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn full_command_line_is_understood() {
        let o = parse(
            &argv("l1-a:t0 l1-b:t1 --delay-us 2500 --loss 1.5 --seed 9 --rate-mbit 200 --vnet"),
            &Tunables::default(),
        )
        .unwrap();
        let [l] = o.links.as_slice() else {
            panic!("one link expected: {o:?}")
        };
        assert_eq!(l.a, ("l1-a".into(), "t0".into()));
        assert_eq!(l.b, ("l1-b".into(), "t1".into()));
        assert!(l.vnet);
        assert_eq!(l.seed, 9);
        assert_eq!(l.link.delay_ns, 2_500_000);
        assert!((l.link.loss - 0.015).abs() < 1e-12);
        assert_eq!(l.link.rate_bps, Some(200_000_000));
        assert_eq!(l.link.header_bytes, 10);
        assert_eq!(l.link.max_frames, (256 << 20) / 65_802);
    }

    #[test]
    fn each_link_keeps_its_own_settings() {
        let o = parse(
            &argv("a:u b:v --delay-us 500 --vnet --seed 3 --link c:u d:v --delay-us 20 --loss 2"),
            &Tunables::default(),
        )
        .unwrap();
        let [first, second] = o.links.as_slice() else {
            panic!("two links expected: {o:?}")
        };
        assert_eq!((first.a.0.as_str(), second.b.0.as_str()), ("a", "d"));
        assert_eq!(
            (first.link.delay_ns, second.link.delay_ns),
            (500_000, 20_000)
        );
        assert_eq!((first.seed, second.seed), (3, 1));
        assert!(first.vnet && !second.vnet);
        assert_eq!((first.link.loss, second.link.loss), (0.0, 0.02));
        let e = parse(
            &argv("a:u b:v --delay-us 5 --link c:u d:v"),
            &Tunables::default(),
        )
        .unwrap_err();
        assert!(e.contains("link 2: --delay-us is required"), "{e}");
        let e = parse(&argv("a:u b:v --delay-us 5 --link"), &Tunables::default()).unwrap_err();
        assert!(e.contains("link 2: expected two endpoints"), "{e}");
    }

    #[test]
    fn bad_values_are_named_in_the_error() {
        let e = parse(&argv("a:t b:t --delay-us ten"), &Tunables::default()).unwrap_err();
        assert!(e.contains("--delay-us") && e.contains("\"ten\""), "{e}");
        let e = parse(
            &argv("a:t b:t --delay-us 1 --loss 150"),
            &Tunables::default(),
        )
        .unwrap_err();
        assert!(e.contains("--loss") && e.contains("150"), "{e}");
        let e = parse(&argv("a:t bt --delay-us 1"), &Tunables::default()).unwrap_err();
        assert!(e.contains("\"bt\""), "{e}");
        let e = parse(&argv("a:t b:t"), &Tunables::default()).unwrap_err();
        assert!(e.contains("--delay-us is required"), "{e}");
        for bad in ["0", "lots"] {
            let e = parse(&argv("a:t b:t --delay-us 1"), &queue(bad)).unwrap_err();
            let quoted = format!("{bad:?}");
            assert!(
                e.contains("CROSSMPI_TAPDELAY_QUEUE_MB") && e.contains(&quoted),
                "{e}"
            );
        }
        let spin = Tunables {
            queue_mb: None,
            spin_us: Some("20000"),
        };
        let e = parse(&argv("a:t b:t --delay-us 1"), &spin).unwrap_err();
        assert!(
            e.contains("CROSSMPI_TAPDELAY_SPIN_US") && e.contains("\"20000\""),
            "{e}"
        );
        let e = parse(
            &argv("a:t b:t --delay-us 1 --rate-mbit -3"),
            &Tunables::default(),
        )
        .unwrap_err();
        assert!(e.contains("--rate-mbit"), "{e}");
    }

    #[test]
    fn queue_size_sets_the_frame_bound() {
        let o = parse(&argv("a:t b:t --delay-us 0"), &queue("9")).unwrap();
        assert_eq!(o.spin_ns, 100_000);
        let l = &o.links[0].link;
        assert_eq!(l.max_frames, (9 << 20) / 9_216);
        assert_eq!(l.rate_bps, None);
        assert_eq!(l.loss, 0.0);
    }
}
