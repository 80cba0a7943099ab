// What a browser on another origin may do with the interface (Fetch standard CORS): read every answer, and per
// route which request headers its preflight allows (RouteSpec.cors). The server and the mirror client both read it here.

/** The request headers a route's cross-origin callers may send besides the CORS-safelisted ones. */
export interface CorsSpec {
  allowHeaders: string[];
}

/** GET routes: a conditional GET (If-None-Match); Content-Type kept so a client library's default header passes. */
export const READ_CORS: CorsSpec = { allowHeaders: ["Content-Type", "If-None-Match"] };
/** POST routes that read a JSON body: application/json is not CORS-safelisted, so a preflight must allow it. */
export const JSON_BODY_CORS: CorsSpec = { allowHeaders: ["Content-Type", "If-None-Match"] };
/** The acquisition route: its planned bearer and payment credentials travel in Authorization (docs/contract.md §4.5). */
export const CREDENTIALS_CORS: CorsSpec = { allowHeaders: ["Content-Type", "Authorization"] };
/** The Zarr view: readers ask byte ranges (Range, If-Range) of immutable keys, and revalidate them. */
export const RANGE_CORS: CorsSpec = { allowHeaders: ["Range", "If-Range", "If-None-Match"] };

/** Headers a browser script may read besides the CORS-safelisted ones (the provenance headers among them). */
export const EXPOSED_HEADERS = ["Content-Digest", "Repr-Digest", "Service-Dataset-Version", "Service-Request-SHA256", "Service-Period", "Link", "ETag", "Allow", "Content-Range", "Accept-Ranges"].join(", ");

/** On every answer: any origin may read it (public data, no credentials), with the headers above. */
export const CORS_HEADERS: Readonly<Record<string, string>> = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED_HEADERS };

/** A day: the route table changes only with a release. */
const PREFLIGHT_MAX_AGE_SEC = 86400;

/** The 204 headers of a preflight of a path with these routes: its methods, and the union of their allowed headers. */
export function preflightHeaders(allow: string, specs: CorsSpec[]): Record<string, string> {
  const headers = [...new Set(specs.flatMap((s) => s.allowHeaders))];
  return {
    Allow: allow,
    "Access-Control-Allow-Methods": allow,
    "Access-Control-Allow-Headers": headers.join(", "),
    "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_SEC),
    "Cache-Control": `public, max-age=${PREFLIGHT_MAX_AGE_SEC}`,
  };
}
