// What a route of the interface is (docs/contract.md §1.1): method, path, its check, its handler and what it answers,
// and matching a request against a table of them. The table itself is made where every family's routes meet
// (api/interface.ts); it drives the service's routing, the Allow header of a 405, the mirror client and the OpenAPI paths.

import { schemas } from "../schemas/validate.js";
import type { Answer } from "./answer.js";
import type { Context } from "./context.js";
import type { CorsSpec } from "./cors.js";
import type { ErrorKind, HttpError } from "./errors.js";
import type { ParameterSchema } from "./parameters.js";
import type { TagName } from "./tags.js";

export interface ParameterSpec {
  name: string;
  required?: boolean;
  description: string;
  schema: Record<string, unknown>;
}

/**
 * One route. `check` runs the cheap checks (its parameters, its body) before a computed answer waits for a turn, so a
 * bad request is answered at once, never queued nor shed; what it returns is handed to `handle`, which computes the
 * answer. Both are methods, so a table holds routes of any checked type.
 */
export interface RouteSpec<T = unknown> {
  method: "GET" | "POST";
  /** polka pattern: `:id` is a path parameter */
  path: string;
  operationId: string;
  /** the API reference's tag the route is listed under (api/tags.ts) */
  tag: TagName;
  /** a few words: the route's entry in the reference's sidebar; what it does at length is its description */
  summary: string;
  description?: string;
  /**
   * its query parameters, one JSON Schema (api/parameters.ts queryParameters, which makes `check` read them with it):
   * the OpenAPI document's parameters come from it
   */
  parameters?: ParameterSchema;
  /** schema id of the JSON body (POST routes), and whether the route reads it (the acquisition route never does) */
  body?: string;
  readsBody?: boolean;
  /** schema id (or ids: one of) of the 200 answer */
  answers: string[];
  /** documentation: the 200 answer carries Service-Dataset-Version, Service-Request-SHA256 and Link (docs/contract.md §3.5) */
  provenance?: boolean;
  /** what a cross-origin caller may send: the request headers its CORS preflight allows (api/cors.ts) */
  cors: CorsSpec;
  /** error kinds the route can answer besides 503 service_unavailable */
  errors: ErrorKind[];
  /** immutable GET answers carry an ETag and answer If-None-Match with 304 */
  etag?: "immutable" | "short";
  /**
   * the answer is computed from the dist (read, decoded, written): the transport may bound how many run at once
   * and shed the rest (ApiRequest.admit); cheap answers (health, capabilities, the document, validate) never wait
   */
  computed?: boolean;
  /** the route's bounds by name, with their defaults (Context.bound; a service may be given others: tests scale them down) */
  bounds?: Record<string, number>;
  check?(ctx: Context): T;
  handle(ctx: Context, checked: T): Promise<Answer>;
  /**
   * The OpenAPI description of a 200 the contract's schemas do not cover (its media types and headers), and the schema
   * of its 413's plan items (default: data requests)
   */
  document?: { ok: () => Record<string, unknown>; planItem?: Record<string, unknown>; planRest?: Record<string, unknown> };
  /** path parameters besides `id` */
  pathParams?: ParameterSpec[];
  /** the 200's media types and schemas besides (or, without `answers`, instead of) the JSON of `answers` */
  content?: Record<string, { schema: Record<string, unknown> }>;
  /**
   * How its errors are written when not as the contract's JSON body (OPeNDAP's `Error { code; message; };`, which DAP
   * clients show their user): their media type, what the document says of them, and each error's text and headers
   * beside its own. The status is the error's.
   */
  errorForm?: ErrorForm;
  /** its answer depends on the request's Cookie header (a session's version): kept apart for each */
  readsCookie?: boolean;
  /** its answer holds absolute links made of the request's base URL (ApiRequest.baseUrl): kept apart for each base */
  absoluteLinks?: boolean;
  /** a byte range may be asked for (206, 416) */
  ranges?: boolean;
  /** it may answer 302 with a Location */
  redirects?: boolean;
}

/** A route's own form of its errors (RouteSpec.errorForm). */
export interface ErrorForm {
  type: string;
  description: string;
  render(err: HttpError): { body: string; headers: Record<string, string> };
}

/** A table of routes, whatever each one's check returns. */
export type RouteTable = readonly RouteSpec[];

/** A route whose check and handler agree on what is checked, for a table of routes of every kind. */
export function defineRoute<T>(route: RouteSpec<T>): RouteSpec {
  return route as RouteSpec;
}

/** What a client should do on a 405 for a path, by the methods it has. */
function hintFor(routes: RouteSpec[]): string {
  const post = routes.find((r) => r.method === "POST");
  if (post?.readsBody && post.body) {
    const title = String((schemas[post.body] as { title?: string }).title ?? "body").toLowerCase();
    return `POST a JSON ${title} with -H 'Content-Type: application/json'; GET /api/v1/openapi.json describes it with an example.`;
  }
  if (post) return "POST is the only method here; GET /api/v1/openapi.json describes it.";
  return "this route only reads; use GET.";
}

export function allowOf(routes: RouteSpec[]): string {
  const methods = routes.flatMap((r) => (r.method === "GET" ? ["GET", "HEAD"] : [r.method]));
  return [...methods, "OPTIONS"].join(", ");
}

/** Route patterns split once: every request is matched against each of them. */
const patternParts = new Map<string, string[]>();

function matchPath(pattern: string, path: string): Record<string, string> | null {
  let want = patternParts.get(pattern);
  if (!want) patternParts.set(pattern, (want = pattern.split("/")));
  const got = path.split("/");
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) {
      if (got[i] === "") return null;
      try {
        params[want[i].slice(1)] = decodeURIComponent(got[i]);
      } catch {
        // not UTF-8 once decoded: still this route, with an id that breaks its pattern (400, docs/contract.md §1.2)
        params[want[i].slice(1)] = got[i];
      }
    } else if (want[i] !== got[i]) return null;
  }
  return params;
}

export type RouteMatch = { route: RouteSpec; params: Record<string, string> } | { allow: string; hint: string; routes: RouteSpec[] };

/** The route of a table for a method and path; for a known path with another method, what is allowed there. */
export function findRoute(table: RouteTable, method: string, path: string): RouteMatch | null {
  const wanted = method === "HEAD" ? "GET" : method;
  const onPath: RouteSpec[] = [];
  for (const route of table) {
    const params = matchPath(route.path, path);
    if (!params) continue;
    if (route.method === wanted) return { route, params };
    onPath.push(route);
  }
  return onPath.length > 0 ? { allow: allowOf(onPath), hint: hintFor(onPath), routes: onPath } : null;
}

/** A table's routes grouped by path, for registration and documentation. */
export function groupByPath(table: RouteTable): Map<string, RouteSpec[]> {
  const out = new Map<string, RouteSpec[]>();
  for (const route of table) out.set(route.path, [...(out.get(route.path) ?? []), route]);
  return out;
}
