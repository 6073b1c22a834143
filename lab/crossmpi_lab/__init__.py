"""crossmpi lab: emulated clusters, private networks, front-ends and WAN links on one
machine, in network namespaces. See docs/testbed.md."""

from .fields import TopologyError
from .lab import Lab, LabSignal
from .topology import load

__all__ = ["Lab", "LabSignal", "TopologyError", "load"]
