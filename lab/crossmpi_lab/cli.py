"""`crossmpi lab COMMAND`: up, exec, status, down, draw."""

import os
import sys

from . import draw, nsexec, state, topology
from .fields import TopologyError
from .lab import Lab
from .netns import CommandError

USAGE = """usage: crossmpi lab up FILE [--name NAME]       start a topology and leave it running
       crossmpi lab exec [--lab NAME] HOST [--] COMMAND [ARGS...]
                                                  run a command inside a host
       crossmpi lab status [--lab NAME]           hosts, addresses, links, processes
       crossmpi lab down [--lab NAME | --all]     remove everything a lab made
       crossmpi lab draw FILE [-o PNG]            diagram of a topology file
NAME defaults to $CROSSMPI_LAB, else to the only lab that is up."""


def fail(message, code=2):
    print(f"crossmpi lab: {message}", file=sys.stderr)
    return code


def take_option(args, flag):
    """Removes `flag VALUE` or `flag=VALUE` from the front options of args."""
    for i, a in enumerate(args):
        if a == flag:
            if i + 1 >= len(args):
                raise TopologyError(f"{flag} needs a value")
            value = args[i + 1]
            del args[i:i + 2]
            return value
        if a.startswith(flag + "="):
            del args[i]
            return a.split("=", 1)[1]
    return None


def pick_lab(explicit):
    name = explicit or os.environ.get("CROSSMPI_LAB")
    if name:
        return name
    labs = state.running_labs()
    if len(labs) == 1:
        return labs[0]
    raise state.LabStateError("no lab is up" if not labs else
                              f"several labs are up ({', '.join(labs)}): choose one with --lab NAME")


def cmd_up(args):
    name = take_option(args, "--name")
    if len(args) != 1:
        return fail(f"up takes one topology file, got {args}\n{USAGE}")
    lab = Lab(args[0], name)
    lab.up()
    print(f"crossmpi lab: {lab.name} is up ({len(lab.topo.nodes)} nodes, {len(lab.topo.links)} links, "
          f"delay: {lab.state.data['delay_mode'] or 'none'}); hosts: {' '.join(lab.hosts)}")
    return 0


def cmd_exec(args):
    # Options come before the host; everything after the host is the command.
    lab_name = None
    while args and args[0].startswith("--lab"):
        lab_name = take_option(args, "--lab")
    if not args:
        return fail(f"exec needs a host and a command\n{USAGE}")
    host, words = args[0], args[1:]
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        return fail(f"exec {host}: no command given")
    try:
        lab_state = state.State.load(pick_lab(lab_name))
    except state.LabStateError as e:
        # 255, like ssh when it cannot reach the host, so launchers tell it apart
        # from the command's own failure.
        return fail(f"exec {host}: {e}", 255)
    nodes = lab_state.data["topology"]["nodes"]
    if host not in nodes:
        return fail(f"exec: lab {lab_state.name} has no host {host!r} (hosts: {', '.join(nodes)})", 255)
    nsexec.exec_in(lab_state.name, host, f"{lab_state.name}-{host}", words)


def cmd_status(args):
    explicit = take_option(args, "--lab")
    names = [pick_lab(explicit)] if explicit or os.environ.get("CROSSMPI_LAB") else state.running_labs()
    if not names:
        print("crossmpi lab: no lab is up")
    for name in names:
        lab = Lab.attach(name)
        data = lab.state.data
        print(f"lab {name}: {lab.topo.kind}, {'ready' if data['ready'] else 'NOT READY (up failed or running)'}, "
              f"delay emulation: {data.get('delay_mode') or 'none'}")
        print("hosts:")
        for node in lab.topo.nodes.values():
            addrs = " ".join(f"{i}={a}" for i, a in lab.topo.addresses(node.name))
            cluster = f" cluster {node.cluster}" if node.cluster else ""
            print(f"  {node.name:10} {node.role:9}{cluster:12} {addrs}")
        print("links:")
        for link in lab.topo.links:
            print(f"  {link.a}:{link.a_if} -- {link.b}:{link.b_if}  {link.kind}  {draw.link_label(link) or 'unshaped'}")
        procs = lab.state.live_processes()
        print(f"processes ({len(procs)} alive of {len(data['processes'])}):")
        for p in data["processes"]:
            print(f"  {p['pid']:>7} {'alive' if p in procs else 'GONE '} {p['what']}")
    return 0


def cmd_down(args):
    if "--all" in args:
        names = state.running_labs()
    else:
        names = [pick_lab(take_option(args, "--lab"))]
    for name in names:
        Lab.attach(name).down()
        print(f"crossmpi lab: {name} is down")
    return 0


def cmd_draw(args):
    out = take_option(args, "-o")
    if len(args) != 1:
        return fail(f"draw takes one topology file, got {args}\n{USAGE}")
    topo = topology.load(args[0])
    out = out or os.path.splitext(os.path.basename(args[0]))[0] + ".png"
    draw.draw(topo, out)
    print(f"crossmpi lab: wrote {out}")
    return 0


COMMANDS = {"up": cmd_up, "exec": cmd_exec, "status": cmd_status, "down": cmd_down, "draw": cmd_draw}


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    command = COMMANDS.get(argv[0])
    if command is None:
        return fail(f"unknown command {argv[0]!r}\n{USAGE}")
    try:
        return command(list(argv[1:]))
    except (ValueError, state.LabStateError, CommandError, KeyError, RuntimeError, OSError) as e:
        return fail(str(e).strip('"'), 1)
