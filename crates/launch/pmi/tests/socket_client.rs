//! The blocking client against the sans-IO server over real sockets: a socketpair
//! (PMI_FD mode) and TCP (PMI_PORT + PMI_ID mode). One test function, because the
//! client reads the process environment.

use crossmpi_pmi::server::{ConnId, Event, JobSpec, Server};
use crossmpi_pmi::Client;
use std::io::{Read, Write};
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Serves one connection of a one-rank job until it closes, or until it aborts when
/// `close_on_abort` (as a launcher that ends the job does); returns the events seen.
fn serve<S: Read + Write + Send + 'static>(
    mut stream: S,
    rank: Option<usize>,
    close_on_abort: bool,
) -> JoinHandle<Vec<Event>> {
    std::thread::spawn(move || {
        let spec = JobSpec {
            kvsname: "kvs_test".into(),
            size: 1,
            appnums: vec![4],
            universe_size: Some(8),
        };
        let mut server = Server::new(spec);
        server.add_connection(ConnId(0), rank).unwrap();
        let mut events = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            let n = stream.read(&mut buf).unwrap_or(0);
            if n == 0 {
                return events;
            }
            server.receive(ConnId(0), &buf[..n]);
            while let Some((_, bytes)) = server.poll_transmit() {
                stream.write_all(&bytes).unwrap();
            }
            events.extend(std::iter::from_fn(|| server.poll_event()));
            if close_on_abort && matches!(events.last(), Some(Event::Aborted { .. })) {
                return events;
            }
        }
    })
}

fn exercise(client: &mut Client) {
    assert_eq!((client.rank(), client.size(), client.appnum()), (0, 1, 4));
    assert_eq!(client.universe_size(), Some(8));
    assert_eq!(client.kvsname(), "kvs_test");
    assert_eq!((client.max_key_len(), client.max_value_len()), (64, 1024));
    client.put("addr-0", "tcp://10.0.0.1:5000").unwrap();
    client.fence().unwrap();
    assert_eq!(client.get("addr-0").unwrap(), "tcp://10.0.0.1:5000");
    let missing = client.get("nope").unwrap_err().to_string();
    assert!(
        missing.contains("get") && missing.contains("nope"),
        "{missing}"
    );
    let spaced = client.put("k", "two words").unwrap_err().to_string();
    assert!(spaced.starts_with("PMI put:"), "{spaced}");
    assert!(client.put("k", &"v".repeat(1025)).is_err());
    assert!(client.put(&"k".repeat(65), "v").is_err());
    client.finalize().unwrap();
}

#[test]
fn client_over_socketpair_and_tcp() {
    for v in ["PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE"] {
        std::env::remove_var(v);
    }
    assert!(
        Client::from_env().unwrap().is_none(),
        "no launcher means singleton"
    );

    // PMI_FD mode.
    let (ours, theirs) = UnixStream::pair().unwrap();
    let server = serve(ours, Some(0), true);
    std::env::set_var("PMI_FD", theirs.into_raw_fd().to_string());
    std::env::set_var("PMI_RANK", "0");
    std::env::set_var("PMI_SIZE", "1");
    let mut client = Client::from_env().unwrap().expect("PMI_FD is set");
    assert_eq!(client.local_ip(), None);
    exercise(&mut client);
    // The launcher closes the connection on abort: the client stops waiting then, long
    // before its linger.
    let start = Instant::now();
    client
        .abort(3, "bad input file", Duration::from_secs(30))
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    drop(client);
    let events = server.join().unwrap();
    assert_eq!(events.first(), Some(&Event::Initialized { process: 0 }));
    assert!(events.contains(&Event::Finalized { process: 0 }));
    assert_eq!(
        events.last(),
        Some(&Event::Aborted {
            process: Some(0),
            code: 3,
            message: Some("bad_input_file".into())
        })
    );

    // PMI_PORT mode: the rank comes from the initack handshake, not PMI_RANK.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accept = std::thread::spawn(move || {
        serve(listener.accept().unwrap().0, None, false)
            .join()
            .unwrap()
    });
    std::env::remove_var("PMI_FD");
    std::env::set_var("PMI_PORT", format!("127.0.0.1:{port}"));
    std::env::set_var("PMI_ID", "0");
    std::env::set_var("PMI_RANK", "7");
    let mut client = Client::from_env().unwrap().expect("PMI_PORT is set");
    assert_eq!(client.local_ip(), Some("127.0.0.1".parse().unwrap()));
    exercise(&mut client);
    // A launcher that keeps the connection open after the abort: the client waits out
    // its linger, no longer.
    let start = Instant::now();
    client.abort(5, "", Duration::from_millis(300)).unwrap();
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(10),
        "{waited:?}"
    );
    drop(client);
    let events = accept.join().unwrap();
    assert!(events.contains(&Event::Finalized { process: 0 }));
    assert!(events.contains(&Event::Aborted {
        process: Some(0),
        code: 5,
        message: None
    }));

    // A PMI_FD that is not a socket is refused with a message naming it.
    std::env::remove_var("PMI_PORT");
    std::env::set_var("PMI_FD", "987");
    let e = Client::from_env().unwrap_err().to_string();
    assert!(e.contains("PMI_FD=987"), "{e}");
    std::env::remove_var("PMI_FD");
}
