// Entry point: `tsx server/main.ts` serves DIST on HOST:PORT, or says which command builds dist and exits 1.

import { resolve } from "node:path";
import { createApp, type App } from "./app.js";
import { CatalogError } from "../format/archive.js";
import { type ServeConfig, type ServeLimits, isDistUrl, readServeConfig } from "./settings.js";
import { exampleQuery } from "./landing.js";
import { loadPrecompiledValidators } from "./precompiled.js";

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The example query as a curl command, or null when no version answers queries. */
async function describeExampleQuery(app: App, baseUrl: string): Promise<string | null> {
  const request = exampleQuery(await app.service.snapshot());
  return request && `curl -sS -X POST ${baseUrl}/api/v1/data/query -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(request))}`;
}

async function main(): Promise<void> {
  let config: ServeConfig;
  try {
    config = readServeConfig(process.env);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  const where = isDistUrl(config.dist) ? config.dist : resolve(config.dist);
  const validators = await loadPrecompiledValidators();
  if (validators !== "used") {
    const why = validators === "stale" ? "was built from other schema files than these" : "is not built";
    console.error(`build/validators.js ${why}: the catalog's validator is compiled at start instead (make install builds it)`);
  }
  let app: App;
  try {
    app = await createApp({
      dist: where,
      watchMs: config.catalogMs,
      log: config.log,
      environment: config.environment,
      cacheBytes: (config.cacheMb << 20) * 0.75,
      answerCacheBytes: (config.cacheMb << 20) * 0.25,
      reads: config.reads,
      limits: config.limits,
    });
  } catch (err) {
    if (err instanceof CatalogError) {
      console.error(`Cannot serve ${config.dist}: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  app.server.on("error", (err: NodeJS.ErrnoException) => {
    console.error(`Cannot listen on ${config.host}:${config.port}: ${err.code ?? err.message}; choose another PORT or HOST.`);
    process.exit(1);
  });
  app.server.listen(config.port, config.host, async () => {
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const host = config.host.includes(":") ? `[${config.host}]` : config.host;
    const baseUrl = `http://${host}:${port}`;
    console.log(`Serving ${where} at ${baseUrl}  (explorer: ${baseUrl}/explorer/, OpenAPI: ${baseUrl}/api/v1/openapi.json)`);
    const example = await describeExampleQuery(app, baseUrl).catch(() => null);
    if (example) console.log(`Try:\n  ${example}`);
    else console.log(`Try:\n  curl -sS ${baseUrl}/api/v1/datasets`);
  });
  stopOnSignals(app, config.limits);
}

/**
 * SIGTERM or SIGINT: the graceful stop (the drain window's answers with `Connection: close`, then no new connections,
 * begun requests finished within the drain timeout), then exit 0, or 1 when the timeout cut requests off. A second
 * signal exits at once.
 */
function stopOnSignals(app: App, { drainWindowMs, drainMs }: ServeLimits): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`${signal} again: exiting now, ${app.stats().inFlight} begun requests cut off`);
      process.exit(1);
    }
    stopping = true;
    const window = Math.min(drainWindowMs, drainMs);
    console.error(`${signal}: stopping; answering ${window} ms more with Connection: close, then no new connections; ${app.stats().inFlight} begun requests finishing (at most ${drainMs} ms in all)`);
    void app.drain().then(({ ms, cut }) => {
      if (cut > 0) console.error(`stopped after ${Math.round(ms)} ms: the drain timeout cut off ${cut} begun requests`);
      else console.error(`stopped: every begun request answered, in ${Math.round(ms)} ms`);
      process.exit(cut > 0 ? 1 : 0);
    });
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

await main();
