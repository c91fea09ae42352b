# agentd — the two commands that matter are `make run` and `make test`.
GO        ?= go
BIN       ?= bin
ADDR      ?= 127.0.0.1:8080
STATICCHECK_VERSION := v0.8.2
GOBIN_DIR := $(shell $(GO) env GOPATH)/bin
TEST_TIMEOUT ?= 30m

.PHONY: run build test test-short fuzz bench lint fmt vet staticcheck loadgen clean

## run: build and start the server on the embedded default (memstore, scripted model, demo agents)
run: build
	$(BIN)/server --addr $(ADDR)

## build: compile bin/server, bin/loadgen and bin/baseline
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/server ./cmd/server
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/loadgen ./cmd/loadgen
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/baseline ./cmd/baseline

## test: the whole suite, with the race detector
test:
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

## test-short: the suite without the slow process-level tests
test-short:
	$(GO) test -race -count=1 -short ./...

## fuzz: every network-facing decoder's fuzz target, and the hand-written JSON's (runlog), for FUZZTIME each (CI runs it)
FUZZTIME ?= 10s
FUZZ_TARGETS := internal/api:FuzzDecodeSendBody internal/api:FuzzCursorParam \
	internal/a2a:FuzzJSONRPCWire internal/a2a:FuzzCheckBody internal/a2a:FuzzResumeCursor \
	internal/auth:FuzzJWT internal/limits:FuzzScanBody internal/config:FuzzParse \
	internal/engine/graph:FuzzParse internal/engine/flow:FuzzLoad \
	internal/runlog:FuzzFrame internal/runlog:FuzzAppendString internal/runlog:FuzzTokenLiterals internal/runtime:FuzzStateBodies \
	internal/store/pgstore:FuzzEncodeFrame internal/agentproto:FuzzRunBody internal/mcpserver:FuzzTokenText
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in ./$${t%%:*} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) ./$${t%%:*}; \
	done

## bench: the Go benchmarks (figures go to docs/benchmarks.md)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./... | tee bench.out

## lint: gofmt, go vet and staticcheck (pinned)
lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	@[ -x $(GOBIN_DIR)/staticcheck ] && $(GOBIN_DIR)/staticcheck -version | grep -q '($(STATICCHECK_VERSION:v%=%))' || \
		GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(GOBIN_DIR)/staticcheck ./...

clean:
	rm -rf $(BIN) bench.out
