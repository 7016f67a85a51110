# osFoundry — the front door. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
BIN := bin/osfoundry
PG_BIN_GLOB := /usr/lib/postgresql/*/bin/initdb
CHROMIUM ?= /usr/bin/chromium

.DEFAULT_GOAL := help

# Lines starting with "#>" are the layout make help prints after the targets.
#> cmd/osfoundry/      main.go dispatches; one file per subcommand (serve.go, migrate.go, owner_create.go,
#>                     owner_set_password.go, token_create.go) beside config.go, database.go, keys.go,
#>                     setup_code.go
#> cmd/osfoundry/agent `osfoundry agent`: login, the stdio bridge, hooks, install
#> handlers/           HTTP only: one file per action (project_list.go, webhook_detail.go …);
#>                     every route in routes.go; the SSE endpoints
#> handlers/mcp/       the MCP endpoint: one file per tool, the front's middlewares (front.go)
#> handlers/oauth/     the OAuth 2.1 authorization server
#> live/               the broker of the live streams (fan-out, presence, unread counts)
#> webhook/            the webhook sender;  outbound/  the SSRF-guarded outgoing client
#> email/              the mail to owners: composers and the SMTP sender; mailpittest/ for tests
#> store/              all SQL, one file per aggregate; listener.go the one LISTEN connection
#> views/ static/      templ components; htmx, CSS, app.js (embedded)
#> migrations/ e2e/    numbered SQL; Playwright and real MCP clients

.PHONY: help
help: ## list the targets, then the layout
	@grep -hE '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo; echo "Layout:"; grep -hE '^#> ' $(MAKEFILE_LIST) | sed 's/^#> /  /'

.PHONY: build
build: ## build bin/osfoundry
	$(GO) build -o $(BIN) ./cmd/osfoundry

# Where make install puts the binary: $(PREFIX)/bin/osfoundry.
PREFIX ?= $(HOME)/.local

.PHONY: install
install: build ## put osfoundry on your PATH: ~/.local/bin/osfoundry (PREFIX=/usr/local for /usr/local/bin)
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/osfoundry
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "$(PREFIX)/bin is not on your PATH: add it, or call $(PREFIX)/bin/osfoundry";; esac

# ARGS are passed to `osfoundry serve`: make run ARGS="--allow-private-targets --log-level debug".
ARGS ?=

.PHONY: run
run: pg-deps build ## start the server on http://localhost:8080 with its own private PostgreSQL (flags: ARGS="…")
	./$(BIN) serve $(ARGS)

.PHONY: generate
generate: ## regenerate templ output (views/*_templ.go)
	$(GO) tool templ generate

# static/sse.js is the htmx SSE extension (npm htmx-ext-sse, the version pinned
# in package.json, for htmx 2), copied byte for byte from its dist folder and
# embedded like htmx.min.js: no CDN, and the CSP stays script-src 'self'.
.PHONY: vendor-js
vendor-js: node-deps ## copy the pinned htmx SSE extension from node_modules into static/
	cp node_modules/htmx-ext-sse/dist/sse.js static/sse.js

.PHONY: deps
deps: pg-deps browser-deps node-deps mailpit ## install everything the tests need (apt packages only when missing)
	$(GO) mod download

# mailpit, the real SMTP server (with an HTTP API) the mail tests send to, is
# built once per machine with `go install` into the user's cache folder,
# outside this module; the Go tests (email/mailpittest, whose Version this
# reads) build it there themselves when it is missing, the browser tests need
# it first.
MAILPIT_VERSION := $(shell sed -n 's/^const Version = "\(.*\)"$$/\1/p' email/mailpittest/mailpittest.go)
MAILPIT ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/osfoundry/mailpit-$(MAILPIT_VERSION)/mailpit

.PHONY: mailpit
mailpit: ## build the test SMTP server (mailpit) into the cache folder, once
	@test -x $(MAILPIT) || { dir=$$(dirname $(MAILPIT)) && mkdir -p $$dir && tmp=$$(mktemp -d $$dir/build-XXXXXX) && \
		trap 'rm -rf "$$tmp"' EXIT && echo "building mailpit $(MAILPIT_VERSION) into $$dir" && \
		(cd $$tmp && GOBIN=$$tmp GOWORK=off GOFLAGS=-mod=mod $(GO) install github.com/axllent/mailpit@$(MAILPIT_VERSION)) && \
		mv $$tmp/mailpit $(MAILPIT); }

.PHONY: pg-deps
pg-deps:
	@if ! ls $(PG_BIN_GLOB) >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then \
		echo "PostgreSQL server binaries missing: installing postgresql"; \
		$(call apt_install,postgresql); \
	fi

.PHONY: browser-deps
browser-deps:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "Chromium missing: installing chromium"; \
		$(call apt_install,chromium); \
	fi

.PHONY: node-deps
node-deps:
	@if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefer-offline --no-audit --no-fund; \
	fi

# apt_install installs Debian packages, as root or through sudo. While another
# apt or dpkg holds its lock it waits, 5 s at a time, at most 5 minutes.
define apt_install
	SUDO=""; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
	apt_get() { \
		for try in $$(seq 60); do \
			out=$$($$SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$$@" 2>&1) && return 0; \
			case "$$out" in \
			*"Could not get lock"*|*"Unable to lock"*) \
				if [ "$$try" = 1 ]; then echo "another apt or dpkg is running: waiting for its lock (at most 5 minutes)"; fi; \
				sleep 5;; \
			*) printf '%s\n' "$$out" >&2; return 1;; \
			esac; \
		done; \
		echo "the apt lock was still held after 5 minutes" >&2; return 1; \
	}; \
	apt_get update -qq && apt_get install -y -qq --no-install-recommends $(1)
endef

# build comes before go-test: the process tests build the same binary, which
# then only needs linking.
.PHONY: test
test: deps lint build go-test fuzz-brief e2e ## install what is missing, lint, then run every test (Go and browser)

# The Go tests create and drop hundreds of databases, tens of thousands of
# files: on tmpfs that costs a fraction of what it costs on disk. TEST_TMPDIR
# (the tests' TMPDIR) is /dev/shm when it is writable with 2 GB free, else the
# usual temp folder.
TEST_TMPDIR ?= $(shell d=/dev/shm; if [ -d $$d ] && [ -w $$d ] && [ "$$(df -Pk $$d | awk 'NR==2 {print $$4}')" -gt 2000000 ]; then echo $$d; else echo $${TMPDIR:-/tmp}; fi)

# go test's own vet pass is off: make lint runs all of go vet first.
.PHONY: go-test
go-test: ## run the Go tests (real PostgreSQL, real HTTP) with the race detector; count them per package
	set -o pipefail; TMPDIR=$(TEST_TMPDIR) $(GO) test -json -race -count=1 -vet=off ./... | $(GO) run ./cmd/testsummary

# The e2e server listens on E2E_PORT when set, else on a free port
# (playwright.config.ts picks it); its data folder is a fresh temp folder,
# removed when the run ends, pass or fail. Playwright's compiled-spec cache
# stays in node_modules instead of /tmp.
.PHONY: e2e
e2e: build mailpit ## run the browser and MCP-client end-to-end tests (Playwright in Debian's Chromium)
	@data=$$(mktemp -d /tmp/osfoundry-e2e.XXXXXX) && trap 'rm -rf "$$data"' EXIT && \
		echo "e2e data folder: $$data (removed at the end)" && \
		OSFOUNDRY_MAILPIT=$(MAILPIT) E2E_DATA_DIR=$$data PLAYWRIGHT_TRANSFORM_CACHE_DIR=$(CURDIR)/node_modules/.cache/playwright-transform npx playwright test

# TEMPL_SUM is a checksum of all templ output, to tell whether `templ generate` changed any.
TEMPL_SUM = find . -name '*_templ.go' -not -path './node_modules/*' | sort | xargs cat | sha256sum

.PHONY: lint
lint: ## gofmt, go vet, staticcheck, and fail if templ output or go.mod/go.sum are stale
	@test -z "$$(gofmt -l . | grep -v node_modules)" || (echo "gofmt needed:"; gofmt -l . | grep -v node_modules; exit 1)
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@before=$$($(TEMPL_SUM)); $(GO) tool templ generate -log-level warn; \
		test "$$before" = "$$($(TEMPL_SUM))" || (echo "templ output was stale: regenerated, commit it"; exit 1)
	@$(GO) mod tidy -diff || (echo "go.mod/go.sum are not tidy: run go mod tidy and commit"; exit 1)

.PHONY: bench
bench: pg-deps ## run the load benchmark and print the table
	$(GO) run ./cmd/osfoundry-bench

# The scale scenario fills a spread of workspaces to 10,000 notes, measures
# every tool and owner page, fills on to a million and measures again: about
# a quarter of an hour (filling the million takes five to seven minutes of
# it). Its figures go to bench-scale-results.json; docs/performance.md reads
# them.
.PHONY: bench-scale
bench-scale: pg-deps ## measure every tool and owner page at 10 k and 1 M notes (the scale section)
	$(GO) run ./cmd/osfoundry-bench --scale 10000,1000000 --only scale --streams 0 --json bench-scale-results.json

# Filling a million notes takes minutes, so search has a target of its own.
.PHONY: bench-search
bench-search: pg-deps ## run the search scenarios over a workspace of 1 M notes
	$(GO) run ./cmd/osfoundry-bench --search-notes 1000000 --only search --streams 0 --concurrency 1,8

# Fuzz targets as package:Function. `make test` runs each briefly; `make fuzz` longer.
# The budgets are counts of executions (Nx), not durations: with a duration,
# go 1.26's fuzzing coordinator can report "context deadline exceeded" as a
# failure when the time runs out while a worker is mid-call, with no failing
# input (golang/go#75804, fixed in go 1.27). A count has no deadline to race.
FUZZ_TARGETS := \
	./handlers/mcp:FuzzAuthWrapper \
	./handlers/mcp:FuzzToolArguments \
	./handlers/oauth:FuzzMatchRedirectURI \
	./handlers/oauth:FuzzOAuthParameters \
	./views:FuzzMailRow \
	./views:FuzzMarkdown
FUZZ_BRIEF ?= 4000x
FUZZ_LONG ?= 200000x

.PHONY: fuzz-brief
fuzz-brief: ## run each fuzz target for $(FUZZ_BRIEF) executions
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZ_BRIEF))"; \
		TMPDIR=$(TEST_TMPDIR) $(GO) test -vet=off -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZ_BRIEF) "$${t%%:*}"; \
	done

.PHONY: fuzz
fuzz: ## run each fuzz target for $(FUZZ_LONG) executions
	$(MAKE) fuzz-brief FUZZ_BRIEF=$(FUZZ_LONG)

.PHONY: clean
clean: ## remove build output (keeps the data folder)
	rm -rf bin test-results playwright-report
