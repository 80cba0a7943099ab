// `npm run --silent mirror -- <mirror-url> <METHOD> <path> [<body-file>]`, `-- series <mirror-url> <lon> <lat>
// [<start> <end>] [--format csv|json|met]` or `-- diff <mirror-url> <old-id> <new-id> [--json]`: the mirror client as a command. The answer
// body goes to stdout as it is, `HTTP <status>` and its headers to stderr. Exit 0 for any answer the interface
// computed (4xx and 5xx included), 2 when the mirror cannot be read or a piece fails verification, 64 on bad usage, 1 otherwise (an unreadable body-file).

import { readFile } from "node:fs/promises";
import { buffer } from "node:stream/consumers";
import { AnswerError, CatalogError, type DateSide, IntegrityError, StorageError, createMirrorClient } from "./index.js";

const USAGE = `usage: npm run --silent mirror -- <mirror-url> <METHOD> <path> [<body-file>|-] [--content-type <type>]
       npm run --silent mirror -- series <mirror-url> <lon> <lat> [<start> <end>] [--format csv|json|met] [--variables a,b]
       npm run --silent mirror -- diff <mirror-url> <old-id> <new-id> [--json]

  mirror-url    where the dist is served (the folder with catalog.json), e.g. http://127.0.0.1:8081/
  METHOD path   a request of the interface, e.g. GET /api/v1/datasets?limit=2
  body-file     the request body (- reads stdin); sent as application/json unless --content-type says otherwise

The answer body goes to stdout, "HTTP <status>" and its headers to stderr. Exit 0 for any answer (4xx and 5xx
included), 2 when the mirror cannot be read or fails verification, 64 on bad usage.

series: the place's values from start to end (default: the whole period), GET /api/v1/series answered from the
mirror, the very bytes a server sends: CSV (the default), JSON or an APSIM weather file (--format met, with
--variables radiation,max_temp,min_temp,daily_rain). Exit 1 when the call is refused (the answer's error on stderr).

diff: the dates whose cells differ between two versions, one a line: date, change (added, removed, revised), the
sha256 of its source files in the old and in the new version (- when it holds no such date); with --json one
JSON object a line. A summary (counts, requests and bytes read) goes to stderr. Exit 1 for an unknown version.`;

class UsageError extends Error {}

function parseArgs(args: string[]): { url: string; method: string; path: string; bodyFile?: string; contentType?: string } {
  const positional: string[] = [];
  let contentType: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--content-type") contentType = args[++i];
    else if (args[i].startsWith("--content-type=")) contentType = args[i].slice("--content-type=".length);
    else if (args[i] === "-h" || args[i] === "--help") throw new UsageError("");
    else positional.push(args[i]);
  }
  if (positional.length < 3 || positional.length > 4) throw new UsageError("expected <mirror-url> <METHOD> <path> [<body-file>]");
  const [url, method, path, bodyFile] = positional;
  if (!/^https?:\/\//.test(url)) throw new UsageError(`${url} is not an http(s) URL`);
  if (!path.startsWith("/")) throw new UsageError(`${path} is not a path (it starts with /, e.g. /api/health)`);
  return { url, method: method.toUpperCase(), path, bodyFile, contentType };
}

async function readBodyFile(file: string): Promise<Uint8Array> {
  return file === "-" ? await buffer(process.stdin) : await readFile(file);
}

async function writeOut(bytes: Uint8Array | string): Promise<void> {
  await new Promise<void>((done, fail) => process.stdout.write(bytes, (err) => (err ? fail(err) : done())));
}

/** `--name value` or `--name=value` out of `args`; the rest stay positional. */
function takeOption(args: string[], name: string): { value: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) value = args[++i];
    else if (args[i].startsWith(`--${name}=`)) value = args[i].slice(name.length + 3);
    else rest.push(args[i]);
  }
  return { value, rest };
}

async function runSeries(args: string[]): Promise<number> {
  const formatOption = takeOption(args.filter((a) => a !== "--csv"), "format");
  const variablesOption = takeOption(formatOption.rest, "variables");
  const positional = variablesOption.rest;
  const format = formatOption.value ?? "csv";
  if (positional.length !== 3 && positional.length !== 5) throw new UsageError("series expects <mirror-url> <lon> <lat> [<start> <end>]");
  if (!["csv", "json", "met"].includes(format)) throw new UsageError(`--format ${format} is not csv, json or met`);
  const [url, lon, lat, start, end] = positional;
  if (!/^https?:\/\//.test(url)) throw new UsageError(`${url} is not an http(s) URL`);
  if (!Number.isFinite(Number(lon)) || !Number.isFinite(Number(lat))) throw new UsageError(`${lon} ${lat} is not a longitude and latitude`);
  const client = createMirrorClient({ baseUrl: url, environment: process.env.SERVICE_ENVIRONMENT });
  const variables = variablesOption.value?.split(",");
  const answer = await client.series({ lon: Number(lon), lat: Number(lat), start, end, variables, format: format as "csv" | "json" | "met" });
  await writeOut(answer.body);
  return 0;
}

async function runDiff(args: string[]): Promise<number> {
  const json = args.includes("--json");
  const positional = args.filter((a) => a !== "--json");
  if (positional.length !== 3) throw new UsageError("diff expects <mirror-url> <old-id> <new-id>");
  const [url, oldId, newId] = positional;
  if (!/^https?:\/\//.test(url)) throw new UsageError(`${url} is not an http(s) URL`);
  const client = createMirrorClient({ baseUrl: url, environment: process.env.SERVICE_ENVIRONMENT });
  const counts = { added: 0, removed: 0, revised: 0 };
  if (!json) await writeOut("date\tchange\told_source_sha256\tnew_source_sha256\n");
  for await (const change of client.diffDates(oldId, newId)) {
    counts[change.kind]++;
    const sources = (side: DateSide | null) => (side ? side.sources.join(",") : "-");
    await writeOut(json ? `${JSON.stringify(change)}\n` : `${change.date}\t${change.kind}\t${sources(change.old)}\t${sources(change.new)}\n`);
  }
  const { requests, bytes } = client.stats();
  const total = counts.added + counts.removed + counts.revised;
  process.stderr.write(`${total} dates differ (${counts.added} added, ${counts.revised} revised, ${counts.removed} removed); ${requests} requests, ${bytes} bytes read from the mirror\n`);
  return 0;
}

async function main(args: string[]): Promise<number> {
  if (args[0] === "series") return runSeries(args.slice(1));
  if (args[0] === "diff") return runDiff(args.slice(1));
  const { url, method, path, bodyFile, contentType } = parseArgs(args);
  const body = bodyFile === undefined ? null : await readBodyFile(bodyFile);
  const client = createMirrorClient({ baseUrl: url, environment: process.env.SERVICE_ENVIRONMENT });
  const answer = await client.answer({ method, path, body, contentType: body ? (contentType ?? "application/json") : contentType });
  const lines = [`HTTP ${answer.status}`, ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`)];
  process.stderr.write(`${lines.join("\n")}\n`);
  await writeOut(answer.body);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message ? `mirror: ${err.message}\n\n` : ""}${USAGE}\n`);
      process.exitCode = 64;
    } else if (err instanceof AnswerError || err instanceof RangeError) {
      process.stderr.write(`mirror: ${err.message}\n`);
      process.exitCode = 1;
    } else if (err instanceof IntegrityError || err instanceof StorageError || err instanceof CatalogError) {
      process.stderr.write(`mirror: ${err.message}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`mirror: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = 1;
    }
  },
);
