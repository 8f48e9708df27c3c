# Common commands. `make test` is the one command that builds and tests
# everything from a fresh clone: it installs what is missing first.

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build testenv test unit integration e2e clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The local control plane (Go); cached by Go's build cache after the first
# build.
testenv: deps
	bash scripts/build-testenv.sh $(BUILD)

test: build testenv
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

unit: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L unit

e2e: build testenv
	ctest --test-dir $(BUILD) --output-on-failure -L e2e

integration: build testenv
	ctest --test-dir $(BUILD) --output-on-failure -L integration

clean:
	rm -rf $(BUILD)
