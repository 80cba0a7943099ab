# Climate data service: every command a maintainer, client or mirror operator runs. `make help` lists them.

SOURCES ?=
DIST ?= dist
PORT ?= 8080
HOST ?= 127.0.0.1
FROM ?=
TO ?=
YEARS ?=
VARIABLES ?=
EXTEND ?=
ALLOW_GAPS ?=
PREFER ?=
REHASH ?=
# make update's revision window of every variable, in days; empty: SILO's own per variable (pipeline/commands/update.ts)
REVISION_DAYS ?=
CACHE_MB ?= 32
# publish, prune and sync are the dist's writers, one at a time (docs/operating.md): a second waits up to LOCK_WAIT
# seconds, then refuses naming the holder; fetch and update of one SOURCES folder take turns the same way. LOCAL_LOCK=1
# takes a lock that holds on this host only (a shared folder whose locks stay local, written from this host alone).
LOCK_WAIT ?= 600
LOCAL_LOCK ?=
LOCK_FLAGS = --lock-wait "$(LOCK_WAIT)" $(if $(LOCAL_LOCK),--local-lock)
TSX := node_modules/.bin/tsx
# The server and the pipeline run as bundled JavaScript, built by `make install`, so a start compiles nothing
# (a daily publish through tsx spent about 0.8 s compiling itself and its worker threads' modules).
SERVER_JS := build/server.js
SERVER_SOURCES := $(shell find api format server schemas sources -name '*.ts' -o -name '*.json' 2>/dev/null)
PIPELINE_JS := build/cli.js
PIPELINE_SOURCES := $(shell find pipeline format schemas sources -name '*.ts' -o -name '*.json' 2>/dev/null)
# the explorer: one self-contained page a publish stores as an object (docs/format.md §1)
EXPLORER_HTML := build/explorer.html
EXPLORER_SOURCES := $(shell find explorer client api format schemas -name '*.ts' -o -name '*.json' -o -name '*.html' 2>/dev/null)
# npm packages stay imports (resolved from node_modules at run time); the worker threads' entries sit beside the
# CLI, where pipeline/pool.ts looks for them
ESBUILD_NODE := node_modules/.bin/esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning

.PHONY: help install demo demo-day publish fetch update verify upgrade prune sync serve mirror test typecheck bench fixtures clean

help:
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/' | expand -t 12

install: node_modules/.package-lock.json $(SERVER_JS) $(PIPELINE_JS) $(EXPLORER_HTML) ## install npm packages (exact versions from package-lock.json) and build the server, the pipeline and the explorer

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(PIPELINE_JS): node_modules/.package-lock.json $(PIPELINE_SOURCES)
	@$(ESBUILD_NODE) pipeline/cli.ts pipeline/publish/day-worker.ts pipeline/publish/series-worker.ts --packages=external --outdir=build --entry-names=[name]

$(EXPLORER_HTML): node_modules/.package-lock.json $(EXPLORER_SOURCES)
	@$(TSX) explorer/build.ts

# the bench's publish probe: the same pipeline modules, built the same way, printing the publish summary as JSON
build/publish-probe.js: $(PIPELINE_JS) bench/publish-probe.ts
	@$(ESBUILD_NODE) bench/publish-probe.ts --packages=external --outdir=build --entry-names=[name]

$(SERVER_JS): node_modules/.package-lock.json $(SERVER_SOURCES)
	@node_modules/.bin/esbuild server/main.ts --bundle --platform=node --format=esm --target=node20 --outfile=$@ --log-level=warning \
		--banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);"

demo: publish ## build the demo dist and serve it (the first command on a fresh machine)
	@$(MAKE) --no-print-directory serve DIST="$(DIST)" PORT="$(PORT)" HOST="$(HOST)"

publish: install ## publish SOURCES (default: the demo) into DIST, VARIABLES (default: every one it holds); EXTEND=1 adds to the newest version; PREFER=daily|annual; REHASH=1 reads every file again; waits LOCK_WAIT=600 s for another writer
	@node $(PIPELINE_JS) publish --dist "$(DIST)" $(if $(SOURCES),--sources "$(SOURCES)") $(if $(VARIABLES),--variables "$(VARIABLES)") $(if $(EXTEND),--extend) $(if $(ALLOW_GAPS),--allow-gaps) \
		$(if $(PREFER),--prefer "$(PREFER)") $(if $(REHASH),--rehash) $(LOCK_FLAGS)

demo-day: install ## the daily routine on the demo: generate the next day of every demo variable and publish it onto DIST (a running server serves it within a second)
	@node $(PIPELINE_JS) demo-day --dist "$(DIST)" $(LOCK_FLAGS)

fetch: install ## download SILO daily files FROM..TO, or annual files YEARS=1889-2025, of VARIABLES (default all five) into SOURCES (default .cache/silo); files held are asked for again and downloaded only when SILO rewrote them
	@node $(PIPELINE_JS) fetch $(if $(YEARS),--years "$(YEARS)",--from "$(FROM)" --to "$(TO)") $(if $(VARIABLES),--variables "$(VARIABLES)") $(if $(SOURCES),--sources "$(SOURCES)") $(LOCK_FLAGS)

update: install ## the nightly routine (cron): fetch each of VARIABLES' new days up to TO and re-validate its revision window (REVISION_DAYS, default SILO's own), then publish SOURCES into DIST for the variables that completed (EXTEND=1, PREFER= as make publish); exits non-zero naming any variable not published
	@node $(PIPELINE_JS) update --to "$(TO)" $(if $(VARIABLES),--variables "$(VARIABLES)") $(if $(SOURCES),--sources "$(SOURCES)") --dist "$(DIST)" \
		$(if $(REVISION_DAYS),--revision-days "$(REVISION_DAYS)") $(if $(EXTEND),--extend) $(if $(PREFER),--prefer "$(PREFER)") $(LOCK_FLAGS)

KEEP_DAYS ?= 30
KEEP_FILE ?=
GRACE_HOURS ?= 24
DROP_VERSIONS ?= 1

prune: install ## drop versions the rule does not keep (newest, last KEEP_DAYS days, last of each month, KEEP_FILE ids); delete unreachable files after GRACE_HOURS; DRY_RUN=1 reports only; waits LOCK_WAIT s for another writer
	@node $(PIPELINE_JS) prune --dist "$(DIST)" --keep-days "$(KEEP_DAYS)" $(if $(KEEP_FILE),--keep-file "$(KEEP_FILE)") --grace-hours "$(GRACE_HOURS)" --drop-versions "$(DROP_VERSIONS)" $(if $(DRY_RUN),--dry-run) $(LOCK_FLAGS)

# PRUNE=1 (the default): once the new catalog.json is in place, a sync that brought a pruned catalog (a manifest chain
# that starts again), or finds files waiting for deletion, runs make prune's collect step (DROP_VERSIONS=0) with
# GRACE_HOURS; PRUNE=0 leaves deleting to make prune.
PRUNE ?= 1

sync: install ## make or update the mirror DIST from the dist served at FROM (origin, mirror or CDN): new files verified, catalog.json last; waits LOCK_WAIT s for another writer
	@node $(PIPELINE_JS) sync --from "$(FROM)" --dist "$(DIST)" --prune "$(PRUNE)" --grace-hours "$(GRACE_HOURS)" $(LOCK_FLAGS)

verify: install ## check every file of DIST and every version's tree down to each block
	@node $(PIPELINE_JS) verify --dist "$(DIST)"

upgrade: install ## rewrite a climate-dist-2 DIST as climate-dist-3 in place (every version kept); make prune deletes the old objects after GRACE_HOURS
	@node $(PIPELINE_JS) upgrade --dist "$(DIST)" --grace-hours "$(GRACE_HOURS)" $(LOCK_FLAGS)

# The server's heap is sized to its caches: a young generation of 4 MiB (answers are built per request, and a
# small nursery keeps memory near the caches at no cost in throughput) and an old generation of 64 MiB plus
# twice CACHE_MB, so garbage is collected before the process grows (measured in make bench).
serve: install ## serve DIST over HTTP on HOST:PORT
	@DIST="$(DIST)" PORT="$(PORT)" HOST="$(HOST)" CACHE_MB="$(CACHE_MB)" \
		node --max-semi-space-size=4 --max-old-space-size=$$((64 + 2 * $(CACHE_MB))) $(SERVER_JS)

# A mirror is a second port beside the server's: PORT given on the command line or in the environment wins.
MIRROR_PORT := $(if $(filter command line environment,$(origin PORT)),$(PORT),8081)

mirror: install ## serve DIST as static files the way a CDN does (ranges, ETag, immutable objects/) on 127.0.0.1:PORT (default 8081)
	@$(TSX) client/mirror-server.ts --dist "$(DIST)" --port "$(MIRROR_PORT)"

test: ## typecheck and run every test; ends with "N passed, N failed"
	@bash test/run.sh

typecheck: install ## strict TypeScript check
	@npx tsc --noEmit -p .

bench: install build/publish-probe.js ## benchmarks, every figure beside a baseline of the same run; the last line is JSON
	@bash test/ensure-gdal.sh >/dev/null && bash test/ensure-python.sh && bash test/ensure-command.sh wrk wrk && bash test/ensure-command.sh nginx nginx-light && $(TSX) bench/run.ts

fixtures: ## regenerate the committed test fixtures: GeoTIFFs (GDAL) and annual NetCDF files (netCDF4)
	@bash test/ensure-gdal.sh && bash test/ensure-python.sh && /usr/bin/python3 test/fixtures/make-fixtures.py && /usr/bin/python3 test/fixtures/make-netcdf-fixtures.py

clean: ## remove dist, the built server, generated demo grids and caches
	rm -rf dist build .cache
