// Load shedding for computed answers: a bounded number at work, a bounded wait for a turn, and turns shared fairly
// between clients; beyond the bounds a 503 service_unavailable with Retry-After at once (docs/contract.md §4.2: the
// client retries with backoff), never a queue without end. Cheap and cached answers never come here.

import { HttpError } from "../api/errors.js";

export interface AdmissionLimits {
  /** computed answers at work at once */
  active: number;
  /** answers waiting for a turn, in all and for one client */
  queue: number;
  queuePerClient: number;
  /** the longest wait for a turn */
  queueMs: number;
  retryAfterS: number;
}

interface Waiting {
  start: () => void;
  refuse: (err: HttpError) => void;
  timer: ReturnType<typeof setTimeout>;
}

export interface AdmissionStats {
  active: number;
  queued: number;
  /** requests answered 503 since start */
  shed: number;
}

/**
 * Turns for computed work. Each client (by address) waits in its own line; a freed turn goes to the next client
 * in rotation, so one client with many connections gets one turn in each round, not all of them.
 */
export class Admission {
  private active = 0;
  private queued = 0;
  private shed = 0;
  /** each client's line, in rotation order (a Map keeps insertion order; a served client moves to the end) */
  private readonly lines = new Map<string, Waiting[]>();

  constructor(private readonly limits: AdmissionLimits) {}

  stats(): AdmissionStats {
    return { active: this.active, queued: this.queued, shed: this.shed };
  }

  /** Runs `work` in a turn of `client`'s: now, after a wait, or never (a 503 HttpError). */
  async run<T>(client: string, work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limits.active) await this.wait(client);
    else this.active++;
    try {
      return await work();
    } finally {
      this.handOver();
    }
  }

  private wait(client: string): Promise<void> {
    const line = this.lines.get(client) ?? [];
    if (this.queued >= this.limits.queue) return Promise.reject(this.refusal("full"));
    if (line.length >= this.limits.queuePerClient) return Promise.reject(this.refusal("client"));
    if (line.length === 0) this.lines.set(client, line);
    this.queued++;
    return new Promise<void>((start, refuse) => {
      const waiting: Waiting = {
        start,
        refuse,
        timer: setTimeout(() => {
          line.splice(line.indexOf(waiting), 1);
          if (line.length === 0 && this.lines.get(client) === line) this.lines.delete(client);
          this.queued--;
          refuse(this.refusal("late"));
        }, this.limits.queueMs),
      };
      line.push(waiting);
    });
  }

  /** A turn ends: the next client in rotation starts (the turn passes on), else one fewer is at work. */
  private handOver(): void {
    for (const [client, line] of this.lines) {
      const next = line.shift()!;
      this.lines.delete(client);
      if (line.length > 0) this.lines.set(client, line); // to the end of the rotation
      this.queued--;
      clearTimeout(next.timer);
      // after the event loop has polled once more: answers whose pieces are cached would otherwise run one after
      // another in a single turn, and health and new requests would wait behind the whole chain
      setImmediate(next.start);
      return;
    }
    this.active--;
  }

  /**
   * The 503 of each reason, made once: under overload most answers are these, so they cost no more than the
   * cheapest answer (no message or stack to build each time).
   */
  private readonly refusals = new Map<Refusal, HttpError>();

  private refusal(reason: Refusal): HttpError {
    this.shed++;
    let err = this.refusals.get(reason);
    if (!err) {
      const { active, queue, queuePerClient, queueMs, retryAfterS } = this.limits;
      const why = {
        full: `its ${active} turns for computed answers are taken and ${queue} requests wait already`,
        client: `this client already has ${queuePerClient} requests waiting for a turn`,
        late: `no turn for this computed answer came within ${queueMs} ms`,
      }[reason];
      err = new HttpError("service_unavailable", `The server is busy: ${why}. Retry after ${retryAfterS} s, with exponential backoff.`, undefined, {
        "Retry-After": String(retryAfterS),
      });
      this.refusals.set(reason, err);
    }
    return err;
  }
}

type Refusal = "full" | "client" | "late";
