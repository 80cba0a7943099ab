# Climate data service: every command a maintainer, client or mirror operator runs. `make help` lists them.
#
# A variable left unset is passed on to no command, which then takes its own default: each default is stated once, in
# the code (pipeline/defaults.ts for the pipeline's commands, server/settings.ts for the server's), and make help
# prints them from there.

# No built-in rules: make would otherwise try them on each of the hundreds of sources `install` depends on (20 of the
# 50 ms `make serve` spent before node started).
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

SOURCES ?=
DIST ?=
PORT ?=
HOST ?=
FROM ?=
TO ?=
YEARS ?=
VARIABLES ?=
EXTEND ?=
ALLOW_GAPS ?=
PREFER ?=
REHASH ?=
THREADS ?=
# make update's revision window of every variable, in days; empty: SILO's own per variable (format/variables.ts revisionDays)
REVISION_DAYS ?=
CACHE_MB ?=
# publish, prune and sync are the dist's writers, one at a time (docs/operating.md): a second waits up to LOCK_WAIT
# seconds, then refuses naming the holder; fetch and update of one SOURCES folder take turns the same way. LOCAL_LOCK=1
# takes a lock that holds on this host only (a shared folder whose locks stay local, written from this host alone).
LOCK_WAIT ?=
LOCAL_LOCK ?=
LOCK_FLAGS = $(if $(LOCK_WAIT),--lock-wait "$(LOCK_WAIT)") $(if $(LOCAL_LOCK),--local-lock)
DIST_FLAG = $(if $(DIST),--dist "$(DIST)")
TSX := node_modules/.bin/tsx
# $(call rwildcard,folders,patterns): the files under the folders matching the patterns, found by make itself (three
# `find` processes took 24 of the 30 ms make spent before `make serve` started node)
rwildcard = $(foreach d,$(wildcard $(1:=/*)),$(call rwildcard,$d,$2) $(filter $(subst *,%,$2),$d))
# The server and the pipeline run as bundled JavaScript, built by `make install`, so a start compiles nothing
# (a daily publish through tsx spent about 0.8 s compiling itself and its worker threads' modules).
SERVER_JS := build/server.js
# the validators a server's start runs, compiled at build time (schemas/precompile.ts; server/precompiled.ts loads them)
VALIDATORS_JS := build/validators.js
SERVER_SOURCES := $(call rwildcard,api format server schemas sources,*.ts *.json)
PIPELINE_JS := build/cli.js
PIPELINE_SOURCES := $(call rwildcard,pipeline format schemas sources,*.ts *.json)
# the explorer: one self-contained page a publish stores as an object (docs/format.md §1)
EXPLORER_HTML := build/explorer.html
EXPLORER_SOURCES := $(call rwildcard,explorer client api format schemas,*.ts *.json *.html)
# npm packages stay imports (resolved from node_modules at run time); the worker threads' entries sit beside the
# CLI, where pipeline/pool.ts looks for them
ESBUILD_NODE := node_modules/.bin/esbuild --bundle --platform=node --format=esm --target=node20 --log-level=warning
# the server's settings alone, for make to ask before it starts the server (its heap) and for make help (its defaults)
SETTINGS_JS := build/settings.js
REDOC_PACKAGE := redoc@2.5.4
REDOC_SHA512 := M6jWhG1qoBnH6TFmzJnstyCZ87HmOY/UzDm78mHiYihEdlV/YcS9ogOo1NlElnJMeLsyxHFe2yFc4sNjHTrABQ==
REDOC_JS := build/redoc.standalone.js
# $(call SETTINGS,expression): prints what an expression of the module `settings` gives (no comma in it, for call's sake)
SETTINGS = node --input-type=module -e 'import("./$(SETTINGS_JS)").then((settings) => console.log($(1))).catch((err) => { console.error(err.message); process.exit(1); })'
# the server's heap flags at the default CACHE_MB, asked of the built settings once, when they are built: make serve
# asks node again only when CACHE_MB is given (one node start less before the server's, a fifth of its start-up);
# otherwise make reads them itself ($(file <)) and starts node with no shell or cat between
HEAP_FLAGS := build/heap-flags.txt

.PHONY: help install demo demo-day publish fetch update verify upgrade prune sync serve mirror test typecheck bench fixtures clean

help: $(PIPELINE_JS) $(SETTINGS_JS) ## every target, then each variable's default as the code states it
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/' | expand -t 12
	@echo; echo "defaults of the variables left unset (pipeline/defaults.ts, server/settings.ts):"
	@node $(PIPELINE_JS) defaults | sed 's/^/  /'
	@$(call SETTINGS,settings.describeServeDefaults().join("\n")) | sed 's/^/  /'

install: node_modules/.package-lock.json $(SERVER_JS) $(VALIDATORS_JS) $(PIPELINE_JS) $(SETTINGS_JS) $(HEAP_FLAGS) $(EXPLORER_HTML) $(REDOC_JS) ## install npm packages (exact versions from package-lock.json) and build the server, the pipeline and the explorer

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(PIPELINE_JS): node_modules/.package-lock.json $(PIPELINE_SOURCES)
	@$(ESBUILD_NODE) pipeline/cli.ts pipeline/publish/day-worker.ts pipeline/publish/series-worker.ts --packages=external --outdir=build --entry-names=[name]

$(SETTINGS_JS): node_modules/.package-lock.json server/settings.ts
	@$(ESBUILD_NODE) server/settings.ts --outfile=$@

$(HEAP_FLAGS): $(SETTINGS_JS)
	@CACHE_MB= $(call SETTINGS,settings.heapFlags({}).join(" ")) > $@.part && mv $@.part $@

$(EXPLORER_HTML): node_modules/.package-lock.json $(EXPLORER_SOURCES)
	@$(TSX) explorer/build.ts

# Redoc's standalone bundle for the HTML API reference (server/docs.ts): the one file of the npm package it needs,
# taken by npm pack and held to the registry's sha512. Installing the package instead would bring 108 packages
# (84 MB, about 20 s more of npm ci) that the bundle does not use.
$(REDOC_JS):
	@rm -rf build/.redoc && mkdir -p build/.redoc
	@cd build/.redoc && npm pack --silent --loglevel=error $(REDOC_PACKAGE) >/dev/null
	@node -e 'const f = require("fs").readdirSync("build/.redoc")[0], h = require("crypto").createHash("sha512").update(require("fs").readFileSync("build/.redoc/" + f)).digest("base64"); if (h !== process.argv[1]) { console.error(`$(REDOC_PACKAGE): sha512-$${h} is not the pinned one`); process.exit(1); }' $(REDOC_SHA512)
	@tar -xzf build/.redoc/*.tgz -C build/.redoc package/bundles/redoc.standalone.js package/bundles/redoc.standalone.js.LICENSE.txt
	@mv build/.redoc/package/bundles/redoc.standalone.js.LICENSE.txt build/ && mv build/.redoc/package/bundles/redoc.standalone.js $@ && rm -rf build/.redoc

# the bench's publish probe: the same pipeline modules, built the same way, printing the publish summary as JSON
build/publish-probe.js: $(PIPELINE_JS) bench/publish-probe.ts
	@$(ESBUILD_NODE) bench/publish-probe.ts --packages=external --outdir=build --entry-names=[name]

$(VALIDATORS_JS): node_modules/.package-lock.json $(wildcard schemas/*.json schemas/dist/*.json) schemas/validate.ts schemas/fingerprint.ts schemas/precompile.ts
	@$(TSX) schemas/precompile.ts $@

$(SERVER_JS): node_modules/.package-lock.json $(SERVER_SOURCES)
	@node_modules/.bin/esbuild server/main.ts --bundle --platform=node --format=esm --target=node20 --outfile=$@ --log-level=warning \
		--banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);"

demo: publish ## build the demo dist and serve it (the first command on a fresh machine)
	@$(MAKE) --no-print-directory serve

publish: install ## publish SOURCES (default: the demo) into DIST, VARIABLES (default: every one it holds); EXTEND=1 adds to the newest version; PREFER=daily|annual; REHASH=1 reads every file again; THREADS=N its threads; waits LOCK_WAIT s for another writer
	@node $(PIPELINE_JS) publish $(DIST_FLAG) $(if $(SOURCES),--sources "$(SOURCES)") $(if $(VARIABLES),--variables "$(VARIABLES)") $(if $(EXTEND),--extend) $(if $(ALLOW_GAPS),--allow-gaps) \
		$(if $(PREFER),--prefer "$(PREFER)") $(if $(REHASH),--rehash) $(if $(THREADS),--threads "$(THREADS)") $(LOCK_FLAGS)

demo-day: install ## the daily routine on the demo: generate the next day of every demo variable and publish it onto DIST (a running server serves it within a second)
	@node $(PIPELINE_JS) demo-day $(DIST_FLAG) $(LOCK_FLAGS)

fetch: install ## download SILO daily files FROM..TO, or annual files YEARS=1889-2025, of VARIABLES (default every one of format/variables.ts) into SOURCES; files held are asked for again and downloaded only when SILO rewrote them
	@node $(PIPELINE_JS) fetch $(if $(YEARS),--years "$(YEARS)",--from "$(FROM)" --to "$(TO)") $(if $(VARIABLES),--variables "$(VARIABLES)") $(if $(SOURCES),--sources "$(SOURCES)") $(LOCK_FLAGS)

update: install ## the nightly routine (cron): fetch each of VARIABLES' new days up to TO and re-validate its revision window (REVISION_DAYS, default SILO's own), then publish SOURCES into DIST for the variables that completed (EXTEND=1, PREFER= as make publish); exits non-zero naming any variable not published
	@node $(PIPELINE_JS) update --to "$(TO)" $(if $(VARIABLES),--variables "$(VARIABLES)") $(if $(SOURCES),--sources "$(SOURCES)") $(DIST_FLAG) \
		$(if $(REVISION_DAYS),--revision-days "$(REVISION_DAYS)") $(if $(EXTEND),--extend) $(if $(PREFER),--prefer "$(PREFER)") $(LOCK_FLAGS)

KEEP_DAYS ?=
KEEP_FILE ?=
GRACE_HOURS ?=
DROP_VERSIONS ?=
GRACE_FLAG = $(if $(GRACE_HOURS),--grace-hours "$(GRACE_HOURS)")

prune: install ## drop versions the rule does not keep (newest, last KEEP_DAYS days, last of each month, KEEP_FILE ids); delete unreachable files after GRACE_HOURS; DRY_RUN=1 reports only; waits LOCK_WAIT s for another writer
	@node $(PIPELINE_JS) prune $(DIST_FLAG) $(if $(KEEP_DAYS),--keep-days "$(KEEP_DAYS)") $(if $(KEEP_FILE),--keep-file "$(KEEP_FILE)") $(GRACE_FLAG) \
		$(if $(DROP_VERSIONS),--drop-versions "$(DROP_VERSIONS)") $(if $(DRY_RUN),--dry-run) $(LOCK_FLAGS)

# PRUNE=1 (the default): once the new catalog.json is in place, a sync that brought a pruned catalog (a manifest chain
# that starts again), or finds files waiting for deletion, runs make prune's collect step (DROP_VERSIONS=0) with
# GRACE_HOURS; PRUNE=0 leaves deleting to make prune.
PRUNE ?=

sync: install ## make or update the mirror DIST from the dist served at FROM (origin, mirror or CDN): new files verified, catalog.json last; waits LOCK_WAIT s for another writer
	@node $(PIPELINE_JS) sync --from "$(FROM)" $(DIST_FLAG) $(if $(PRUNE),--prune "$(PRUNE)") $(GRACE_FLAG) $(LOCK_FLAGS)

verify: install ## check every file of DIST and every version's tree down to each block
	@node $(PIPELINE_JS) verify $(DIST_FLAG)

upgrade: install ## rewrite a climate-dist-3 DIST as climate-dist-4 in place (every version kept); make prune deletes the old objects after GRACE_HOURS
	@node $(PIPELINE_JS) upgrade $(DIST_FLAG) $(GRACE_FLAG) $(LOCK_FLAGS)

# The server reads DIST, PORT, HOST, CACHE_MB and its other settings from the environment, where make puts the
# variables given to it; its heap is sized to its caches (server/settings.ts heapFlags, from CACHE_MB or its default).
serve: install ## serve DIST over HTTP on HOST:PORT
	@$(if $(CACHE_MB),heap="$$($(call SETTINGS,settings.heapFlags(process.env).join(" ")))" && exec node $$heap $(SERVER_JS),node $(file < $(HEAP_FLAGS)) $(SERVER_JS))

# A mirror is a second port beside the server's: PORT given wins, else the mirror's own default (client/mirror-server.ts).
mirror: install ## serve DIST as static files the way a CDN does (ranges, ETag, immutable objects/) on 127.0.0.1:PORT (default 8081)
	@$(TSX) client/mirror-server.ts $(DIST_FLAG) $(if $(PORT),--port "$(PORT)")

test: ## typecheck and run every test; ends with "N passed, N failed"
	@bash test/run.sh

typecheck: install ## strict TypeScript check
	@npx tsc --noEmit -p .

bench: install build/publish-probe.js ## benchmarks, every figure beside a baseline of the same run; the last line is JSON
	@bash test/support/ensure-gdal.sh >/dev/null && bash test/support/ensure-python.sh && bash test/support/ensure-command.sh wrk wrk && bash test/support/ensure-command.sh nginx nginx-light && $(TSX) bench/run.ts

fixtures: ## regenerate the committed test fixtures: GeoTIFFs (GDAL) and annual NetCDF files (netCDF4)
	@bash test/support/ensure-gdal.sh && bash test/support/ensure-python.sh && /usr/bin/python3 test/fixtures/make-fixtures.py && /usr/bin/python3 test/fixtures/make-netcdf-fixtures.py

clean: ## remove dist, the built server, generated demo grids and caches
	rm -rf dist build .cache
