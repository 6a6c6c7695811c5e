# A thin front for CMake: `make`, `make test`, `make run`, `make install PREFIX=...`.
MAKEFLAGS += --no-print-directory
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all build check test test-unit test-asan test-tsan test-pg test-integration test-model test-mutants test-image test-deb run install uninstall pg pg-install bench bench-btree bench-innodb bench-pg fuzz clean format image

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The whole suite: warnings as errors, unit tests under ASan+UBSan, the concurrency
# tests under TSan, the PostgreSQL extension, the integration tests (real servers) on the
# release build, SPIN on the models of the fence argument, the container image, the
# Debian packages (built, linted, installed into a fresh Debian root), then the
# mutants (tests/mutants.txt: each fence and durability line broken must fail its tests).
test:
	@scripts/test.sh

# The inner loop, a few minutes: the unit and concurrency tests and one integration test
# of each family (CTest label smoke: the CLI, the server, the file lease, segments on the
# file and on Redis, etcd).
check:
	@scripts/test.sh check

test-unit test-asan test-tsan test-pg test-integration test-model test-mutants test-image test-deb:
	@scripts/test.sh $(patsubst test-%,%,$@)

# The embedded default: the service on 127.0.0.1 with the file lease provider.
run: build
	@scripts/run.sh

# Binary, libraries, headers, .pc files, man pages, docs and the systemd unit under
# PREFIX (DESTDIR=... stages them elsewhere); uninstall removes what it installed.
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

uninstall:
	@scripts/uninstall.sh $(BUILD)

# The container image (Containerfile) with podman. RUN steps under chroot isolation need
# no OCI runtime, so the build also works where `podman run` cannot start a container.
# BASE=... builds FROM another base (a local one when no registry is reachable).
VERSION := $(shell awk '/^project/ {print $$3}' CMakeLists.txt)
PODMAN ?= podman
IMAGE ?= idgen:$(VERSION)
IMAGE_FLAGS ?= --isolation=chroot
BASE ?=
image:
	$(PODMAN) build $(IMAGE_FLAGS) $(if $(BASE),--build-arg BASE=$(BASE)) -t $(IMAGE) -f Containerfile .

# The PostgreSQL extension (pg/, docs/postgres.md): built against $(BUILD)'s libraries;
# pg-install puts it into PostgreSQL's directories (as root, or through sudo).
pg: build
	@$(MAKE) -C pg IDGEN_BUILD=$(abspath $(BUILD))

pg-install: build
	@scripts/pg-install.sh $(BUILD)

bench: build
	@scripts/bench.sh

# What each ID scheme does to a PostgreSQL B-tree; rewrites docs/btree.md's results.
bench-btree: build
	@bench/btree.sh --build $(BUILD) --docs

bench-innodb: build
	@bench/innodb.sh --build $(BUILD) --docs

fuzz:
	@scripts/fuzz.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan
	@$(MAKE) -C pg clean >/dev/null 2>&1 || true

# Sequences, Redis INCR and the Flickr ticket server next to idgen; then idgen serve against
# nginx, redis-server and its ceiling. Each rewrites bench/results/ and its docs section.
.PHONY: bench-ticket bench-server bench-tls
bench-ticket: build
	@bench/ticket.sh --build $(BUILD) --docs

bench-server: build
	@bench/server.sh --build $(BUILD) --docs

# idgen serve over TLS against nginx and redis-server over TLS, and each against plain text.
bench-tls: build
	@bench/tls.sh --build $(BUILD) --docs

# The PostgreSQL extension against nextval() and gen_random_uuid(); needs make pg-install.
bench-pg: pg-install
	@bench/pg.sh --docs
