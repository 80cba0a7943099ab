// Entry point: `tsx server/main.ts` serves DIST on HOST:PORT, or says which command builds dist and exits 1.

import { resolve } from "node:path";
import { makeDataRequest } from "../api/request.js";
import type { Window } from "../format/grid.js";
import { createApp, type App } from "./app.js";
import { CatalogError } from "../format/archive.js";

interface ServeConfig {
  dist: string;
  port: number;
  host: string;
  log: boolean;
  environment: string;
  /** memory for caches, MiB: three quarters for verified pieces and blocks, a quarter for computed answers */
  cacheMb: number;
}

function readCacheMb(spec: string | undefined): number {
  const mb = Number(spec ?? 32);
  if (!Number.isInteger(mb) || mb < 4 || mb > 65536) throw new Error(`CACHE_MB=${spec} is not a whole number of MiB from 4 to 65536`);
  return mb;
}

function readServeConfig(env: NodeJS.ProcessEnv): ServeConfig {
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT=${env.PORT} is not a port number (0..65535)`);
  }
  return {
    dist: env.DIST || "dist",
    port,
    host: env.HOST || "127.0.0.1",
    log: env.LOG !== "0",
    environment: env.SERVICE_ENVIRONMENT || "demo",
    cacheMb: readCacheMb(env.CACHE_MB),
  };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * A query that returns data: 2 x 2 cells at the centre of the newest query candidate's first date (inland
 * Australia on the full grid).
 */
async function describeExampleQuery(app: App, baseUrl: string): Promise<string | null> {
  const newest = (await app.service.snapshot()).pointer.candidates[0];
  if (!newest || newest.coverage.windowAll[2] === 0) return null;
  const [col, row, width, height] = newest.coverage.windowAll;
  const window: Window = [col + Math.max(0, Math.floor(width / 2) - 1), row + Math.max(0, Math.floor(height / 2) - 1), Math.min(2, width), Math.min(2, height)];
  const request = makeDataRequest(window, newest.coverage.first, newest.coverage.first);
  return `curl -sS -X POST ${baseUrl}/api/v1/data/query -H 'Content-Type: application/json' -d ${shellQuote(JSON.stringify(request))}`;
}

async function main(): Promise<void> {
  let config: ServeConfig;
  try {
    config = readServeConfig(process.env);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  let app: App;
  try {
    app = await createApp({
      dist: resolve(config.dist),
      log: config.log,
      environment: config.environment,
      cacheBytes: (config.cacheMb << 20) * 0.75,
      answerCacheBytes: (config.cacheMb << 20) * 0.25,
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
    console.log(`Serving ${resolve(config.dist)} at ${baseUrl}  (OpenAPI: ${baseUrl}/api/v1/openapi.json)`);
    const example = await describeExampleQuery(app, baseUrl).catch(() => null);
    if (example) console.log(`Try:\n  ${example}`);
    else console.log(`Try:\n  curl -sS ${baseUrl}/api/v1/datasets`);
  });
  const stop = () => {
    void app.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

await main();
