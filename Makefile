# A thin front for CMake: `make`, `make test`, `make run`, `make install PREFIX=...`.
MAKEFLAGS += --no-print-directory
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all build test test-unit test-asan test-tsan test-integration test-model run install bench bench-btree fuzz clean format

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The whole suite: warnings as errors, unit tests under ASan+UBSan, the concurrency
# tests under TSan, the integration tests (real servers) on the release build, then
# SPIN on the model of the fence argument.
test:
	@scripts/test.sh

test-unit test-asan test-tsan test-integration test-model:
	@scripts/test.sh $(patsubst test-%,%,$@)

# The embedded default: the service on 127.0.0.1 with the file lease provider.
run: build
	@scripts/run.sh

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	@scripts/bench.sh

# What each ID scheme does to a PostgreSQL B-tree; rewrites docs/btree.md's results.
bench-btree: build
	@bench/btree.sh --build $(BUILD) --docs

fuzz:
	@scripts/fuzz.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan build-fuzz

# Sequences, Redis INCR and the Flickr ticket server next to idgen; then idgen serve against
# nginx, redis-server and its ceiling. Each rewrites bench/results/ and its docs section.
.PHONY: bench-ticket bench-server
bench-ticket: build
	@bench/ticket.sh --build $(BUILD) --docs

bench-server: build
	@bench/server.sh --build $(BUILD) --docs
