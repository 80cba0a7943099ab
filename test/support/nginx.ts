// A real static host for tests and the bench: nginx (Debian's nginx-light, installed by make test when missing) as a
// child process serving a folder on a free 127.0.0.1 port, from a temporary config; its access log says what was asked.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export interface Nginx {
  /** http://127.0.0.1:<port>/ */
  url: string;
  /** the requests answered so far: "<METHOD> <path> <status> <body bytes>", oldest first */
  requests(): Promise<string[]>;
  stop(): Promise<void>;
}

export interface NginxOptions {
  /** nginx's limit_rate for every response (e.g. "64k": 64 kB/s per connection, sent 1 kB at a time so small files are slow too), to catch a download mid-way */
  limitRate?: string;
}

/** A port nothing listens on now (the kernel picks it), for servers that must be told their port. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = net.createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => done(port));
    });
  });
}

function configText(root: string, dir: string, port: number, options: NginxOptions): string {
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${join(dir, t)};`).join("\n");
  // as root, nginx's workers would run as nobody, who cannot read a test's private temp folders
  return `${process.getuid?.() === 0 ? "user root;\n" : ""}daemon off;
worker_processes 1;
pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "error.log")} warn;
events { worker_connections 256; }
http {
  log_format plain '$request_method $uri $status $body_bytes_sent';
  access_log ${join(dir, "access.log")} plain;
${temp}
  types { application/json json; text/html html; application/javascript js; }
  default_type application/octet-stream;
  sendfile on;
  server {
    listen 127.0.0.1:${port};
    root ${resolve(root)};
    ${options.limitRate ? `limit_rate ${options.limitRate}; sendfile off; output_buffers 1 1k;` : ""}
  }
}
`;
}

async function waitForPort(port: number, child: ChildProcess, errorLog: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${await readFile(errorLog, "utf8").catch(() => "")}`);
    const open = await new Promise<boolean>((done) => {
      const socket = net.connect(port, "127.0.0.1", () => (socket.destroy(), done(true)));
      socket.once("error", () => done(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`nginx did not listen on ${port}: ${await readFile(errorLog, "utf8").catch(() => "")}`);
}

/** nginx serving `root` (a dist) until stop(). */
export async function startNginx(root: string, options: NginxOptions = {}): Promise<Nginx> {
  const dir = await mkdtemp(join(tmpdir(), "nginx-"));
  const port = await freePort();
  const config = join(dir, "nginx.conf");
  await writeFile(config, configText(root, dir, port, options));
  const child = spawn("nginx", ["-c", config, "-p", dir], { stdio: ["ignore", "ignore", "pipe"] });
  try {
    await waitForPort(port, child, join(dir, "error.log"));
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  const stopped = new Promise<void>((done) => child.once("exit", () => done()));
  return {
    url: `http://127.0.0.1:${port}/`,
    requests: async () => (await readFile(join(dir, "access.log"), "utf8").catch(() => "")).split("\n").filter(Boolean),
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM"); // nginx's fast shutdown, workers included
      await stopped;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
