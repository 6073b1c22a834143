#!/usr/bin/env bash
# Installs what building and testing crossmpi needs on a fresh Debian 12 machine:
# a C compiler (mpicc wraps it), gfortran (Fortran bindings), Python with Mininet and
# the network tools (crossmpi lab), and a Rust toolchain. Idempotent and quiet when
# everything is already present.
set -euo pipefail
need=()
pkgs=(build-essential gfortran python3 python3-pytest python3-matplotlib mininet bridge-utils
      iproute2 iptables nftables iperf3 iputils-ping ethtool openvswitch-switch graphviz
      python3-toml python3-venv procps curl ca-certificates mpich)
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  for i in 1 2 3; do
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null && break
    echo "deps: apt-get failed (try $i), retrying"; sleep 5
  done
fi
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then :; else
    echo "deps: installing Rust with rustup"
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt >/dev/null
  fi
fi
