"""Reachability probes run inside lab hosts."""

import shlex


def pings(lab, src, addrs, wait_s=1):
    """{addr: True/False}: one ICMP echo from `src` to each address, all in parallel.
    A warm-up echo first, so ARP resolution does not count against the probe."""
    script = " ".join(
        f"(ping -c1 -W{wait_s} {a} >/dev/null 2>&1 || ping -c1 -W{wait_s} {a} >/dev/null 2>&1"
        f" && echo {a} yes || echo {a} no) &" for a in addrs) + " wait"
    out = lab.cmd(src, script, timeout=30)
    result = dict(line.split() for line in out.splitlines())
    return {a: result[a] == "yes" for a in addrs}


LISTENER = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(8); s.settimeout(float(sys.argv[2]))
print("listening", flush=True)
try:
    while True:
        c, peer = s.accept(); c.sendall((peer[0] + "\\n").encode()); c.close()
except socket.timeout:
    pass
"""


def listen(lab, host, port, seconds=10):
    """A TCP server in `host` that answers each connection with the caller's address
    as it sees it, for `seconds`."""
    import subprocess

    p = lab.popen(host, ["python3", "-c", LISTENER, str(port), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "listening"
    return p


def connect(lab, src, addr, port, timeout=1.5):
    """The peer address the server reports, or None if no connection could be opened."""
    code = ("import socket,sys\n"
            f"try:\n s=socket.create_connection(({addr!r},{port}),timeout={timeout})\n"
            " print(s.recv(100).decode().strip())\n"
            "except OSError:\n print('none')")
    out = lab.run(src, f"python3 -c {shlex.quote(code)}").stdout.strip()
    return None if out == "none" else out
