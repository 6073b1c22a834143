"""Reading a TOML table with checks whose errors name the file, the key and the value."""

import ipaddress
import re


class TopologyError(ValueError):
    pass


class Fields:
    """One TOML table. Every key must be read, so a misspelt key is an error rather
    than a silently ignored setting."""

    def __init__(self, source, path, table):
        if not isinstance(table, dict):
            raise TopologyError(f"{source}: {path} must be a table, got {table!r}")
        self.source, self.path, self.values = source, path, table
        self.used = set()

    def fail(self, key, value, why):
        raise TopologyError(f"{self.source}: {self._child(key)} = {value!r}: {why}")

    def _get(self, key, default):
        self.used.add(key)
        return self.values.get(key, default)

    def number(self, key, default, lo, hi, integer=False):
        value = self._get(key, default)
        if value is None:
            return None
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            self.fail(key, value, "must be an integer" if integer else "must be a number")
        if not lo <= value <= hi:
            self.fail(key, value, f"must be between {lo} and {hi}")
        return value

    def choice(self, key, default, allowed):
        value = self._get(key, default)
        if value not in allowed:
            self.fail(key, value, f"must be one of {', '.join(allowed)}")
        return value

    def name(self, key, default=None, max_len=6):
        value = self._get(key, default)
        if not isinstance(value, str) or not re.fullmatch(rf"[a-z][a-z0-9]{{0,{max_len - 1}}}", value):
            self.fail(key, value, f"must be a lower-case letter then letters/digits, at most {max_len} characters")
        return value

    def text(self, key, default=None):
        value = self._get(key, default)
        if value is not None and not isinstance(value, str):
            self.fail(key, value, "must be a string")
        return value

    def subnet(self, key, default, min_size):
        value = self._get(key, default)
        try:
            net = ipaddress.ip_network(value)
        except (TypeError, ValueError):
            self.fail(key, value, "must be an IPv4 network like 10.0.0.0/24")
        if net.version != 4 or net.num_addresses < min_size:
            self.fail(key, value, f"must be an IPv4 network with at least {min_size} addresses")
        return net

    def tables(self, key):
        value = self._get(key, [])
        if not isinstance(value, list):
            self.fail(key, value, "must be an array of tables ([[...]])")
        return [Fields(self.source, f"{self._child(key)}[{i}]", t) for i, t in enumerate(value)]

    def table(self, key):
        return Fields(self.source, self._child(key), self._get(key, {}))

    def _child(self, key):
        return f"{self.path}.{key}" if self.path else key

    def array(self, key):
        value = self._get(key, [])
        if not isinstance(value, list):
            self.fail(key, value, "must be an array")
        return value

    def finish(self):
        unknown = sorted(set(self.values) - self.used)
        if unknown:
            where = self.path or "top level"
            raise TopologyError(f"{self.source}: unknown key(s) {', '.join(unknown)} in {where}")


def host_addr(net, index):
    """Address number `index` of `net`, with the prefix length (e.g. 10.0.0.11/24)."""
    return f"{net.network_address + index}/{net.prefixlen}"


def plain(net, index):
    return str(net.network_address + index)
