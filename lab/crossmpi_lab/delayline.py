"""Choosing how delay and loss are emulated: netem where the kernel has it, otherwise
crossmpi's user-space delay line (`crossmpi-tapdelay`) between two TAPs."""

import os
import shutil
import subprocess

from . import netns

# CROSSMPI_LAB_DELAY: auto (netem if the kernel has it), netem, or tapdelay.
DELAY_ENV = "CROSSMPI_LAB_DELAY"


def mode():
    wanted = os.environ.get(DELAY_ENV, "auto")
    if wanted not in ("auto", "netem", "tapdelay"):
        raise ValueError(f"{DELAY_ENV}={wanted!r}: must be auto, netem or tapdelay")
    if wanted == "auto":
        return "netem" if netns.netem_available() else "tapdelay"
    return wanted


def is_delay_line(path):
    """True if `path` is a working crossmpi-tapdelay (not a stub build, nor one from
    before one process served several links with `--link`)."""
    p = subprocess.run([path, "--help"], capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.startswith("usage: crossmpi-tapdelay") and "--link" in p.stdout


def tapdelay_binary():
    """CROSSMPI_TAPDELAY, else PREFIX/bin (CROSSMPI_PREFIX is set by `crossmpi lab`),
    else PATH, else a cargo target directory of the source tree."""
    explicit = os.environ.get("CROSSMPI_TAPDELAY")
    if explicit:
        return explicit
    candidates = []
    prefix = os.environ.get("CROSSMPI_PREFIX")
    if prefix:
        candidates.append(os.path.join(prefix, "bin", "crossmpi-tapdelay"))
    on_path = shutil.which("crossmpi-tapdelay")
    if on_path:
        candidates.append(on_path)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    candidates += [os.path.join(target, kind, "crossmpi-tapdelay") for kind in ("release", "debug")]
    for c in candidates:
        if os.access(c, os.X_OK) and is_delay_line(c):
            return c
    raise FileNotFoundError("crossmpi-tapdelay not found (looked in " + ", ".join(candidates) +
                            "); build it with `cargo build --release -p crossmpi-tapdelay` or set CROSSMPI_TAPDELAY")
