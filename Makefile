# rung: the two commands of the README.
#   make quickstart   install what is missing, build, run the main job (a small real sweep)
#   make test         install what is missing, build, run every test
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

# ccache only hits across build folders and clones with these (see shared perf notes).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime

.PHONY: all deps configure build corpus test quickstart bench bench-orchestration clean

all: build

deps:
	deploy/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

corpus: deps
	deploy/fetch-builtin-corpus.sh $(BUILD)/data/builtin

test: build corpus
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 1200

# The main job: a real sweep (4 variants x 3 rungs of the builtin corpus) through a local
# coordinator and 2 workers, live progress, results and compute multipliers at the end.
quickstart: build corpus
	$(BUILD)/bin/rung run sweeps/examples/quickstart.yaml --workers 2 --dir $(BUILD)/runs/quickstart-$$(date +%Y%m%d-%H%M%S)

bench: build corpus
	deploy/install-deps.sh --with-bench
	/usr/bin/python3 bench/train_throughput.py --build-dir $(BUILD)

# Coordinator and workers under load (bench/README.md "Orchestration"): rung against Optuna on 2,000
# trials, metric ingestion, coordinator memory. Torch-free targets only.
bench-orchestration: configure
	deploy/install-deps.sh --with-bench
	cmake --build $(BUILD) -j $(JOBS) --target rung-coordinator rung-worker rung rung-bench-stand-in rung-bench-metric-ingest
	/usr/bin/python3 bench/orchestration.py --build-dir $(BUILD) --out-json $(BUILD)/bench/orchestration.json

clean:
	rm -rf $(BUILD)
