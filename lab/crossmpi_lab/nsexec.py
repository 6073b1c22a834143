"""`crossmpi lab exec`: replace this process by a command running inside a lab host.

The process *becomes* the command (setns, then exec), so stdin/stdout/stderr, the
working directory and the environment pass through untouched, the exit status is the
command's, and a signal sent to the launch agent (mpirun tears ranks down that way)
reaches the command itself. Python 3.11 has no os.setns, hence ctypes.
"""

import ctypes
import os
import shlex
import socket

CLONE_NEWNET = 0x40000000
CLONE_NEWUTS = 0x04000000
# CROSSMPI_LAB_EXEC_SHELL=1: always join the words and run them with /bin/sh -c, as
# ssh does, for launchers that quote their command line for a remote shell.
SHELL_ENV = "CROSSMPI_LAB_EXEC_SHELL"


def enter_host(path, host):
    """Joins the host's network namespace and takes the host's name as hostname (in a
    UTS namespace of this process), so MPI_Get_processor_name and logs show `a1`,
    not the machine's name."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)
    if libc.unshare(CLONE_NEWUTS) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare(CLONE_NEWUTS): {os.strerror(err)}")
    socket.sethostname(host)


def command_words(words):
    """What to exec for the words after the host name: several words are an argv
    (no shell), one word with spaces or shell syntax is a shell command line, as
    `ssh HOST 'cmd args'` would run it."""
    if os.environ.get(SHELL_ENV) == "1" or (len(words) == 1 and words[0] != shlex.quote(words[0])):
        return ["/bin/sh", "-c", " ".join(words)]
    return words


def exec_in(lab_name, host, ns, words):
    enter_host(f"/run/netns/{ns}", host)
    os.environ["CROSSMPI_LAB_HOST"] = host
    os.environ["CROSSMPI_LAB"] = lab_name
    argv = command_words(words)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        raise SystemExit(f"crossmpi lab exec: {host}: cannot run {argv[0]!r}: {e.strerror}") from None
