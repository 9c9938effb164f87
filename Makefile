# kubectl-sched. `make demo` runs the main job on the shipped example;
# `make test` runs every test (unit, conformance, fuzz, end-to-end) on a
# fresh machine, building what the end-to-end tests need on first use.

GO        ?= go
BIN       ?= bin/kubectl-sched
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -X github.com/kubectl-sched/kubectl-sched/internal/version.Version=$(VERSION) \
             -X github.com/kubectl-sched/kubectl-sched/internal/version.Commit=$(COMMIT) \
             -X github.com/kubectl-sched/kubectl-sched/internal/version.Date=$(DATE)
UNIT_PKGS  = $(shell $(GO) list ./... | grep -v '/test/e2e')
FUZZTIME  ?= 15s

.PHONY: all build install demo test test-unit test-browser test-long test-e2e fuzz vet fmt-check check-imports bench bench-kube bench-whatif golden docs completions krew-manifest fgd fgd-study clean help

all: build

help: ## list targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sed -e 's/:.*## /\t/' -e 's/\$$\$$/$$/g'

build: ## build bin/kubectl-sched
	@[ -x $(BIN) ] || echo "make: building $(BIN); the first build compiles client-go and the other Kubernetes modules and takes minutes (later ones, seconds); each package is named as it compiles"
	$(GO) build -v -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kubectl-sched

install: ## go install kubectl-sched into GOBIN (kubectl finds it as `kubectl sched`)
	$(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/kubectl-sched

demo: build ## dry-run of examples/cluster.yaml
	./$(BIN) dryrun -f examples/cluster.yaml

test: fmt-check vet check-imports test-unit test-browser test-long fuzz test-e2e ## every test

test-unit: ## unit, golden and conformance tests with the race detector (the HTML report test skips itself without chromium)
	$(GO) test -race -count=1 -timeout 30m $(UNIT_PKGS)

# hack/install-chromium.sh exits 3 when it cannot install chromium (not
# root, or no apt-get): the check is then skipped, saying why. CI runs as
# root on Debian and so runs it.
test-browser: ## the HTML report in headless chromium (installs Debian's chromium when root with apt-get; else skipped, saying why)
	@./hack/install-chromium.sh; rc=$$?; \
	if [ $$rc = 3 ]; then echo "test-browser: skipped: chromium is not installed and cannot be installed here (see above)"; \
	elif [ $$rc != 0 ]; then exit $$rc; \
	else KUBECTL_SCHED_BROWSER=1 $(GO) test -count=1 -run 'InChromium' ./docs; fi

test-long: ## the 5000-node placement comparisons with kube-scheduler (Mixed, and the gang workload of make bench; no race detector: seconds, not minutes)
	KUBECTL_SCHED_LONG=1 $(GO) test -count=1 -run 'TestKubebenchPlaceRuns/mixed-5000nodes|TestKubebench(Capacity|Drain)|TestGangBenchEngine' ./test/conformance

fuzz: ## run the snapshot loader fuzz target briefly
	$(GO) test -run='^$$' -fuzz=FuzzLoad -fuzztime=$(FUZZTIME) ./internal/snapshot

test-e2e: e2e-bins ## end-to-end tests against a real kube-apiserver + etcd (built and cached on first use)
	@if [ -d test/e2e ]; then $(GO) test -count=1 -timeout 40m ./test/e2e/...; else echo "test-e2e: no e2e tests yet"; fi

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

check-imports: ## enforce the dependency direction (docs/architecture.md)
	@./hack/check-imports.sh

bench: ## dry-run throughput (pods/s, pods/cpu-s, heap) on shipped and generated snapshots with the ratio to kube-scheduler's recorded figures, then capacity and drain timings
	$(GO) run ./hack/bench
	$(GO) run ./hack/bench -whatif

bench-kube: ## run kube-scheduler (hack/kubebench) right after ours on each workload (BENCH_RUN=a,b picks; all takes hours) and record its figures for `make bench`
	$(GO) run ./hack/bench -kube run -record $(if $(BENCH_RUN),-run '$(BENCH_RUN)')

bench-whatif: ## capacity and drain timings on a generated 5000-node cluster
	$(GO) run ./hack/bench -whatif

# The packages whose tests take -update (a package without the flag would
# fail on it).
GOLDEN_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' 'flag.Bool."update"' .)))

golden: completions ## rewrite golden files (help texts, outputs, gang scenarios, the docs' examples) and completions/
	$(GO) test $(GOLDEN_PKGS) -run 'Golden|TestGangScenarios' -update

docs: ## rewrite the example outputs in docs/ (run in-process on examples/)
	$(GO) test ./docs -run 'Golden' -update

completions: ## regenerate completions/ from the command tree
	$(GO) run ./hack/completions

krew-manifest: ## render hack/krew/sched.yaml for TAG from goreleaser's dist/checksums.txt into dist/krew/sched.yaml
	@if [ -z "$(TAG)" ]; then echo "usage: make krew-manifest TAG=vX.Y.Z (after goreleaser release)"; exit 2; fi
	$(GO) run ./hack/krew -tag $(TAG) -checksums dist/checksums.txt -o dist/krew/sched.yaml

fgd: ## the FGD paper's table on the openb trace, ours beside the paper's (docs/fgd.md); FGD_JSON=path writes the rows, FGD_FLAGS passes more flags
	$(GO) run ./hack/fgd $(if $(FGD_JSON),-json $(FGD_JSON)) $(FGD_FLAGS)

fgd-study: build ## the FGD artifact's whole study (17 workloads x 6 policies x 10 seeds) as a sweep, then every curve compared with the artifact's (docs/fgd.md); resumes where it stopped; FGD_STUDY_FLAGS passes sweep flags (--workers N)
	GOGC=400 $(BIN) sweep -f hack/fgd/study.yaml --resume $(FGD_STUDY_FLAGS) -o csv > hack/fgd/study.results.csv
	$(GO) run ./hack/fgd -study hack/fgd/study.yaml

clean:
	rm -rf bin

-include hack/cluster.mk
