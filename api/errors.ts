// The interface's one error type and its one table from error kind to HTTP status (docs/contract.md §4.2, §4).

import type { Issue } from "../schemas/validate.js";
import { LIMITS } from "./contract.js";

export type { Issue };

// The only place a kind meets its status: handlers name the kind, never the number (titiler keeps one such table).
const STATUS_BY_KIND = {
  bad_request: 400,
  invalid_parameters: 400,
  malformed_json: 400,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  request_too_large: 413,
  response_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  invalid_request: 422,
  coverage_unavailable: 422,
  no_cell_centers: 422,
  unsupported_grid: 422,
  missing_values: 422,
  internal_error: 500,
  service_unavailable: 503,
  acquisition_not_ready: 503,
} as const;

export type ErrorKind = keyof typeof STATUS_BY_KIND;

export function statusOf(kind: ErrorKind): number {
  return STATUS_BY_KIND[kind];
}

export interface ErrorBody {
  error: string;
  message: string;
  issues?: Issue[];
  /** 413: smaller requests (or calls) whose answers, in order, hold exactly the rows (values) asked for */
  plan?: unknown[];
  /** with a plan of the first dates (a box's first rows) only: the original request (call) for the rest */
  planRest?: unknown;
}

/** What a typed error says: its kind (the body's `error`, which fixes the status), its message, and what it adds. */
export interface HttpErrorOptions {
  kind: ErrorKind;
  /** what went wrong and what to send instead (docs/contract.md §4.2) */
  message: string;
  issues?: Issue[];
  /** extra response headers, e.g. Allow on a 405, Retry-After on a 503 */
  headers?: Record<string, string>;
  /** extra body fields */
  extra?: Partial<ErrorBody>;
  /**
   * extra body members already written as pieces of JSON text, in order (`"plan":[...]` of a 413, which may be
   * most of a megabyte: written once into the answer's bytes, never parsed or joined into one string)
   */
  members?: string[];
}

export class HttpError extends Error {
  readonly status: number;
  readonly kind: ErrorKind;
  readonly issues?: Issue[];
  readonly headers: Record<string, string>;
  readonly extra: Partial<ErrorBody>;
  readonly members?: string[];

  constructor(options: HttpErrorOptions) {
    super(options.message);
    this.name = "HttpError";
    this.kind = options.kind;
    this.status = STATUS_BY_KIND[options.kind];
    this.issues = options.issues;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
    this.members = options.members;
  }
}

/** The error body of a typed error (docs/contract.md §4.2). */
export function errorToBody(err: HttpError): ErrorBody {
  return { error: err.kind, message: err.message, ...(err.issues ? { issues: err.issues } : {}), ...err.extra };
}

/** A request body over the contract's bound (docs/contract.md §4.1): the service's check, and the server's while reading. */
export function payloadTooLarge(): HttpError {
  return new HttpError({ kind: "payload_too_large", message: `The request body is over ${LIMITS.maxRequestBytes} bytes; send a data request of at most ${LIMITS.maxRequestBytes} bytes: it is a small JSON object (GET /api/v1/openapi.json has an example).` });
}

/** What an unexpected failure answers: a generic 500 that says nothing about the cause (docs/contract.md §4.2). */
export const INTERNAL_ERROR_BODY: ErrorBody = {
  error: "internal_error",
  message: "The server failed to answer this request; the failure has been logged.",
};
