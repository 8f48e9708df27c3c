# Common commands. `make test` is the one command that builds and tests
# everything from a fresh clone: it installs what is missing first.

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build testenv test unit integration e2e bench clean

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

# Every benchmark: the scoring hot path, the metrics refresh, and the
# end-to-end comparison with kube-scheduler on a control plane of its own
# (minutes; see docs/benchmarks.md). E2E_FLAGS, e.g. --nodes=100 --pods=500
# --runs=1 --rss_pods=0, makes a quick run.
E2E_FLAGS ?=
bench: build testenv
	$(BUILD)/bench/scoring_bench
	$(BUILD)/bench/metrics_bench
	$(BUILD)/bench/e2e_bench --build_dir=$(BUILD) --source_dir=. $(E2E_FLAGS)

clean:
	rm -rf $(BUILD)

# The scheduler at work in a few minutes: a local control plane, Prometheus
# fed with synthetic per-node metrics, pods following them (scripts/demo.sh).
.PHONY: demo
demo: build testenv
	bash scripts/demo.sh $(BUILD)
