"""Loading a topology file: `kind` selects the expansion into the generic model."""

import os
import re
import tomllib

from . import fullmesh, grid, leafspine
from .fields import Fields, TopologyError

KINDS = {"grid": grid.expand, "fullmesh": fullmesh.expand, "leafspine": leafspine.expand}


def lab_name_from(path):
    stem = re.sub(r"[^a-z0-9]", "", os.path.splitext(os.path.basename(path))[0].lower())
    return (stem or "lab")[:10]


def check_lab_name(name, source="lab name"):
    # Names prefix namespaces and state directories; keep them short and plain.
    if not re.fullmatch(r"[a-z][a-z0-9]{0,9}", name or ""):
        raise TopologyError(f"{source}: lab name {name!r} must be a lower-case letter then letters/digits, "
                            "at most 10 characters")
    return name


def load(path, name=None):
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise TopologyError(f"cannot read topology file {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise TopologyError(f"{path}: not valid TOML: {e}") from e
    return from_table(data, path, name)


def from_table(data, source, name=None):
    fields = Fields(source, "", data)
    kind = fields.choice("kind", None, tuple(KINDS))
    file_name = fields.text("name")
    lab = check_lab_name(name or file_name or lab_name_from(source), source)
    fields.text("description")
    topo = KINDS[kind](fields, lab)
    fields.finish()
    return topo
