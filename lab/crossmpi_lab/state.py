"""What a running lab owns, on disk under /run/crossmpi-lab/NAME/, so that `exec`,
`status` and `down` work from any process. Every namespace and process is recorded
*before* it is created, so even a lab whose `up` crashed half-way is removed exactly."""

import json
import os
import shutil
import signal
import time

RUN_DIR = os.environ.get("CROSSMPI_LAB_RUN_DIR", "/run/crossmpi-lab")


class LabStateError(RuntimeError):
    pass


def lab_dir(name):
    return os.path.join(RUN_DIR, name)


def running_labs():
    try:
        return sorted(d for d in os.listdir(RUN_DIR) if os.path.exists(os.path.join(RUN_DIR, d, "state.json")))
    except FileNotFoundError:
        return []


def process_start_time(pid):
    """The kernel's start time of `pid` (field 22 of /proc/PID/stat), which tells a
    process we started apart from a later one that reused its PID."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return None if fields[0] == "Z" else int(fields[19])


class State:
    def __init__(self, name, data):
        self.name, self.data = name, data

    @staticmethod
    def create(name, topology):
        os.makedirs(RUN_DIR, exist_ok=True)
        try:
            os.mkdir(lab_dir(name))
        except FileExistsError:
            raise LabStateError(f"a lab named {name!r} is already up (or left over): "
                                f"run `crossmpi lab down --lab {name}` first") from None
        state = State(name, {"topology": topology.to_dict(), "namespaces": [], "processes": [],
                             "ready": False})
        state.save()
        return state

    @staticmethod
    def load(name):
        try:
            with open(os.path.join(lab_dir(name), "state.json")) as f:
                return State(name, json.load(f))
        except FileNotFoundError:
            labs = running_labs()
            raise LabStateError(f"no lab named {name!r} is up (running labs: {', '.join(labs) or 'none'})") from None

    def path(self, *parts):
        return os.path.join(lab_dir(self.name), *parts)

    def save(self):
        tmp = self.path("state.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path("state.json"))

    def record_namespace(self, ns):
        self.data["namespaces"].append(ns)
        self.save()

    def record_process(self, pid, what):
        self.data["processes"].append({"pid": pid, "start": process_start_time(pid), "what": what})
        self.save()

    def live_processes(self):
        return [p for p in self.data["processes"] if p["start"] is not None
                and process_start_time(p["pid"]) == p["start"]]

    def stop_processes(self, grace=2.0):
        procs = self.live_processes()
        for p in procs:
            try:
                os.kill(p["pid"], signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and self.live_processes():
            time.sleep(0.02)
        for p in self.live_processes():
            try:
                os.kill(p["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass

    def remove(self):
        shutil.rmtree(lab_dir(self.name))
