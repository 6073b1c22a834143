# crossmpi: `make example` builds and runs a 4-rank MPI job; `make test` runs every test.
PREFIX ?= $(CURDIR)/build/install
CARGO ?= $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: all deps build install example test check bench clean
all: install

deps:
	@scripts/deps.sh

build: deps
	$(CARGO) build --release --workspace

install: build
	@scripts/install.sh $(PREFIX)

example: install
	$(PREFIX)/bin/mpicc -O2 examples/ring.c -o build/ring
	$(PREFIX)/bin/mpirun -n 4 build/ring

check:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

test: install
	scripts/test.sh $(PREFIX)

bench: install
	bench/run.sh $(PREFIX)
	bench/coll/run.sh $(PREFIX)
	bench/kernels/run.sh $(PREFIX)

clean:
	$(CARGO) clean; rm -rf build
