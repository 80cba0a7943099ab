// The OpenAPI document's examples: exchanges recorded from the demo dist the tests build (api/examples.json, written
// by test/support/openapi-examples.ts, whose test asks each one again), shown as each operation's requests in curl,
// its request body, and each answer's body under its status.

import recorded from "./examples.json" with { type: "json" };

type Json = Record<string, unknown>;

/** One recorded exchange: a request and the answer it received, the answer's body cut where `cut` says. */
export interface Exchange {
  /** what it shows, in a few words */
  title: string;
  method: string;
  /** the path and query asked */
  path: string;
  /** the JSON body sent */
  body?: unknown;
  status: number;
  /** the answer's media type, without its parameters */
  type?: string;
  /** the answer's body, JSON or text (cut to its first lines); absent when it is empty or binary */
  answer?: unknown;
  /** the answer's headers the example shows (lowercase names): Location, Allow, Access-Control-* */
  headers?: Record<string, string>;
  /** what the example leaves out of the body, for the reader ("`data`: the first 3 of 279 rows") */
  cut?: string;
}

export interface Examples {
  /** the host the exchanges were asked of: the demo's address */
  host: string;
  /** each operation's exchanges, by operationId: its answers (2xx, 3xx), then at least one error */
  operations: Record<string, Exchange[]>;
  /** what every path answers besides (docs/contract.md §4.8): a 405 and a preflight */
  methodNotAllowed: Exchange;
  preflight: Exchange;
}

export const EXAMPLES = recorded as Examples;

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
/** What a binary answer is saved as. */
const FILE_NAMES: Record<string, string> = { "application/x-netcdf": "answer.nc", "application/octet-stream": "answer.bin" };

/** An exchange's request as a curl command line, against `host`. */
export function curlOf(exchange: Exchange, host = EXAMPLES.host): string {
  const url = quote(`http://${host}${exchange.path}`);
  if (exchange.method === "POST") return `curl ${url} -H 'Content-Type: application/json' -d ${quote(JSON.stringify(exchange.body))}`;
  if (exchange.method !== "GET" || (exchange.status >= 300 && exchange.status < 400)) return `curl -i${exchange.method === "GET" ? "" : ` -X ${exchange.method}`} ${url}`;
  const file = exchange.answer === undefined && exchange.type ? FILE_NAMES[exchange.type] : undefined;
  return file ? `curl -o ${file} ${url}` : `curl ${url}`;
}

/** A header's name as it is written (`location` -> `Location`). */
const capitalize = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());

/** A name for an example, unique within its media type: its title's words. */
const exampleName = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");

/** One exchange's answer as the example of its response: its body, or, without one, its headers in the description. */
function addAnswer(responses: Record<string, Json>, exchange: Exchange, operationId: string): void {
  const response = responses[String(exchange.status)];
  if (!response) throw new Error(`${operationId}: an example answers ${exchange.status}, which the operation does not document`);
  const asked = `\`${exchange.method} ${exchange.path}\`${exchange.body === undefined ? "" : " with the request body shown"}`;
  if (exchange.answer === undefined) {
    const shown = Object.entries(exchange.headers ?? {}).map(([name, value]) => `\`${capitalize(name)}: ${value}\``);
    if (shown.length > 0) response.description = `${response.description} For example, ${asked}: ${shown.join(", ")}.`;
    return;
  }
  const media = (response.content as Record<string, Json> | undefined)?.[exchange.type ?? ""];
  if (!media) throw new Error(`${operationId}: an example's ${exchange.status} is ${exchange.type}, which the operation does not document`);
  const examples = (media.examples ??= {}) as Json;
  examples[exampleName(exchange.title)] = { summary: exchange.title, description: `${asked}${exchange.cut ? ` (cut: ${exchange.cut})` : ""}`, value: exchange.answer };
}

/**
 * An operation with its recorded examples: each request that answered as curl (`x-codeSamples`, which Redoc shows
 * beside it), the request body of the first, and every answer's body under its status and media type.
 */
export function addExamples(operation: Json, operationId: string): Json {
  const exchanges = EXAMPLES.operations[operationId] ?? [];
  if (exchanges.length === 0) return operation;
  // a copy: a family's media types may be one object shared by several of its routes
  const out = structuredClone(operation);
  const answered = exchanges.filter((e) => e.status < 400);
  const body = (out.requestBody as { content: Record<string, Json> } | undefined)?.content["application/json"];
  if (body) body.example = (answered[0] ?? exchanges[0]).body;
  for (const exchange of exchanges) addAnswer(out.responses as Record<string, Json>, exchange, operationId);
  out["x-codeSamples"] = (answered.length > 0 ? answered : exchanges).map((e) => ({ lang: "Shell", label: e.title, source: curlOf(e) }));
  return out;
}
