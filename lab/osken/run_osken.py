"""Runs os-ken applications (os-ken from PyPI ships no `osken-manager`).

    crossmpi lab exec ovs V/bin/python lab/osken/run_osken.py APP [os-ken options]

APP is a module path or file; options are os-ken's (e.g. --ofp-listen-host 127.0.0.1
--ofp-tcp-listen-port 6653)."""

import sys

from os_ken.lib import hub

hub.patch(thread=False)

from os_ken import cfg  # noqa: E402
from os_ken.base import app_manager  # noqa: E402


def main(argv):
    if len(argv) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    cfg.CONF(args=argv[1:], project="os_ken")
    manager = app_manager.AppManager.get_instance()
    manager.load_apps([argv[0]])
    services = manager.instantiate_apps(**manager.create_contexts())
    print("os-ken running", flush=True)
    hub.joinall(services)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
