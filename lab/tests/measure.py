"""Goodput and round-trip measurements inside a lab (iperf3 and ping)."""

import json
import re
import statistics
import subprocess
import time


def start_iperf_server(lab, host, port):
    server = lab.popen(host, ["iperf3", "-s", "-1", "-p", str(port)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    # Wait until it listens (ss inside the host) rather than sleeping blindly.
    for _ in range(100):
        if f":{port} " in lab.run(host, ["ss", "-ltn"]).stdout:
            return server
        time.sleep(0.02)
    server.kill()
    raise RuntimeError(f"iperf3 server on {host}:{port} did not start")


def goodput_mbit(lab, src, dst, seconds=4, omit=1, port=5301, extra=(), dst_if=None):
    """TCP goodput src -> dst (its address on `dst_if`, default its first) in Mbit/s
    as the receiver counted it, leaving out the first `omit` seconds (slow start)."""
    server = start_iperf_server(lab, dst, port)
    try:
        p = lab.run(src, ["iperf3", "-c", lab.ip(dst, dst_if), "-p", str(port), "-t", str(seconds), "-O",
                          str(omit), "-J", *extra], timeout=seconds + omit + 30)
        result = json.loads(p.stdout) if p.stdout.startswith("{") else {"error": p.stderr}
        assert p.returncode == 0 and "error" not in result, result.get("error")
        return result["end"]["sum_received"]["bits_per_second"] / 1e6
    finally:
        server.wait(timeout=10)


def ping_stats(lab, src, dst_addr, count=50, interval=0.01):
    """(loss fraction, median RTT, mean RTT) in ms of `count` echoes after one
    warm-up echo (which pays for ARP). The median is the figure the tests check: on
    a shared 2-core machine a few echoes wait for a CPU, which says nothing about the
    emulated link."""
    lab.run(src, ["ping", "-c", "1", "-W", "2", dst_addr])
    p = lab.run(src, ["ping", "-c", str(count), "-i", str(interval), "-W", "2", dst_addr],
                timeout=count * interval + 30)
    loss = float(re.search(r"([\d.]+)% packet loss", p.stdout).group(1)) / 100
    rtts = [float(t) for t in re.findall(r"time=([\d.]+) ms", p.stdout)]
    if not rtts:
        return loss, None, None
    return loss, statistics.median(rtts), statistics.fmean(rtts)
