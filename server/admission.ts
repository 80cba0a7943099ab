// Load shedding for computed answers: a bounded number at work, a bounded wait for a turn, and turns shared fairly
// between clients; beyond the bounds a 503 service_unavailable with Retry-After at once (docs/contract.md §4.2: the
// client retries with backoff), never a queue without end. Cheap and cached answers never come here.

import { HttpError } from "../api/errors.js";
import type { ServeLimits } from "./settings.js";

/**
 * The server's limits that admission keeps, as server/settings.ts declares them; `sendBytes` (answers being sent,
 * each held until its client has it, past which computed work waits for a turn as if none were free, so many slow
 * readers of large answers cannot hold memory without end) may be left out: no bound.
 */
export type AdmissionLimits = Pick<ServeLimits, "active" | "queue" | "queuePerClient" | "queueMs" | "retryAfterS"> & Partial<Pick<ServeLimits, "sendBytes">>;

interface Waiting {
  start: () => void;
  refuse: (err: HttpError) => void;
  timer: ReturnType<typeof setTimeout>;
}

export interface AdmissionStats {
  active: number;
  queued: number;
  /** bytes of answers being sent */
  held: number;
  /** requests answered 503 since start */
  shed: number;
}

/**
 * Computed work that starts at once stops starting at once after this long in one turn of the event loop: answers
 * that never wait for a read (their pieces cached, or inline in the index) would otherwise run one after another
 * for every request the loop polled, and health and new connections would wait behind them all.
 */
export const LOOP_TURN_MS = 10;

/**
 * Turns for computed work. Each client (by address) waits in its own line; a freed turn goes to the next client
 * in rotation, so one client with many connections gets one turn in each round, not all of them.
 */
export class Admission {
  private active = 0;
  private queued = 0;
  private held = 0;
  private shed = 0;
  /** each client's line, in rotation order (a Map keeps insertion order; a served client moves to the end) */
  private readonly lines = new Map<string, Waiting[]>();
  /** when work first started in this turn of the event loop; -1 before any has */
  private turnStart = -1;
  private kickScheduled = false;

  constructor(private readonly limits: AdmissionLimits) {}

  stats(): AdmissionStats {
    return { active: this.active, queued: this.queued, held: this.held, shed: this.shed };
  }

  /** Whether the answers being sent leave room for more work. */
  private hasRoom(): boolean {
    return this.held <= (this.limits.sendBytes ?? Infinity);
  }

  /** Counts `bytes` of an answer being sent until the returned release is called (once its client has it, or left). */
  hold(bytes: number): () => void {
    this.held += bytes;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.held -= bytes;
      if (this.queued > 0 && this.hasRoom()) this.kickSoon();
    };
  }

  /** Runs `work` in a turn of `client`'s: now, after a wait, or never (a 503 HttpError). */
  async run<T>(client: string, work: () => Promise<T>): Promise<T> {
    if (this.active < this.limits.active && this.hasRoom() && !this.loopTurnSpent()) this.active++;
    else {
      const waited = this.wait(client);
      // a turn is free but this loop turn is spent: the next loop turn starts the next in line
      if (this.active < this.limits.active && this.hasRoom()) this.kickSoon();
      await waited;
    }
    try {
      return await work();
    } finally {
      this.handOver();
    }
  }

  /** Whether work has run for LOOP_TURN_MS since it first started in this turn of the event loop. */
  private loopTurnSpent(): boolean {
    const now = performance.now();
    if (this.turnStart < 0) {
      this.turnStart = now;
      setImmediate(() => (this.turnStart = -1));
      return false;
    }
    return now - this.turnStart > LOOP_TURN_MS;
  }

  /** After the event loop has polled: the next in line takes a free turn (and, while one is free, the next after). */
  private kickSoon(): void {
    if (this.kickScheduled) return;
    this.kickScheduled = true;
    setImmediate(() => {
      this.kickScheduled = false;
      if (this.active >= this.limits.active || !this.hasRoom()) return;
      const next = this.takeNext();
      if (!next) return;
      this.active++;
      next.start();
      if (this.queued > 0) this.kickSoon();
    });
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
    // while the answers being sent fill their room, the turn is not passed on: a release starts the next
    const next = this.hasRoom() ? this.takeNext() : null;
    // after the event loop has polled once more: answers whose pieces are cached would otherwise run one after
    // another in a single turn, and health and new requests would wait behind the whole chain
    if (next) setImmediate(next.start);
    else this.active--;
  }

  /** The first in line of the next client in rotation, out of the line; null when no one waits. */
  private takeNext(): Waiting | null {
    for (const [client, line] of this.lines) {
      const next = line.shift()!;
      this.lines.delete(client);
      if (line.length > 0) this.lines.set(client, line); // to the end of the rotation
      this.queued--;
      clearTimeout(next.timer);
      return next;
    }
    return null;
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
      err = new HttpError({
        kind: "service_unavailable",
        message: `The server is busy: ${why}. Retry after ${retryAfterS} s, with exponential backoff.`,
        headers: { "Retry-After": String(retryAfterS) },
      });
      this.refusals.set(reason, err);
    }
    return err;
  }
}

type Refusal = "full" | "client" | "late";
