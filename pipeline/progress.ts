// Progress of long pipeline work: one live line on a terminal, plain lines otherwise (CI logs, pipes).

export interface Progress {
  /** a line worth keeping in any log */
  line(text: string): void;
  /** the live status, shown in place on a TTY; in plain mode only `plain` is printed, as a line, when given */
  status(text: string, plain?: string): void;
  done(): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr, quiet = false): Progress {
  const live = Boolean(stream.isTTY) && !quiet;
  let shown = "";
  const clear = () => {
    if (live && shown) stream.write("\r\x1b[K");
    shown = "";
  };
  return {
    line(text) {
      clear();
      if (!quiet) stream.write(`${text}\n`);
    },
    status(text, plain) {
      if (!live) {
        if (plain !== undefined && !quiet) stream.write(`${plain}\n`);
        return;
      }
      clear();
      shown = text.slice(0, (stream.columns || 100) - 1);
      stream.write(shown);
    },
    done() {
      clear();
    },
  };
}

/** Bytes in SI units (kB = 1000 bytes), one decimal. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n / 1000;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Rate and time left of a long run, from what is done so far: "95.2/s, 3m17s left". */
export function formatEta(done: number, total: number, elapsedMs: number): string {
  if (done === 0 || elapsedMs <= 0) return "";
  const perMs = done / elapsedMs;
  return `${(perMs * 1000).toFixed(1)}/s, ${formatDuration((total - done) / perMs)} left`;
}

/** Bytes moved so far of a total, the rate and the time left: "45.2 MB of 120.0 MB, 12.3 MB/s, 6s left". */
export function formatTransfer(done: number, total: number, elapsedMs: number): string {
  const head = `${formatBytes(done)} of ${formatBytes(total)}`;
  if (done === 0 || elapsedMs <= 0) return head;
  const perMs = done / elapsedMs;
  return `${head}, ${formatBytes(Math.round(perMs * 1000))}/s, ${formatDuration((total - done) / perMs)} left`;
}
