// A static file server as the benches' physical peer: what handing bytes that already sit in files
// to the same client costs on this machine. Debian's nginx (nginx-light) when it is installed,
// started on a loopback port with a configuration of its own in a temp directory (sendfile on, no
// access log, one process); otherwise a minimal node:http file server, and the rows say which.
// The root holds symlinks (`link`) to what it serves: a Zarr store for xarray / zarr-python to read
// over HTTP, and a directory of gridcast's own answers written as files.
import { type ChildProcess, spawn } from "node:child_process";
import {
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer as createHttpServer, get, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";

const NGINX = "/usr/sbin/nginx";
/** How long nginx may take to answer its first request after it was started. */
const START_TIMEOUT_MS = 5_000;
/** Ports tried before giving up (a free port found by the kernel may be taken again before nginx binds it). */
const PORT_TRIES = 5;

export interface StaticServer {
  /** "nginx 1.22.1" or "node:http file server" */
  kind: string;
  /** Base URL, ending in "/". */
  url: string;
  /** Serves `target` (a directory or file) at url + name. */
  link(name: string, target: string): void;
  /** Writes bytes as a file served at url + name. */
  put(name: string, bytes: Uint8Array): void;
  close(): Promise<void>;
}

export async function staticServer(): Promise<StaticServer> {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-static-"));
  const root = join(dir, "root");
  mkdirSync(root);
  const common = {
    link: (name: string, target: string) => symlinkSync(target, join(root, name)),
    put: (name: string, bytes: Uint8Array) => writeFileSync(join(root, name), bytes),
  };
  if (existsSync(NGINX)) {
    for (let i = 0; i < PORT_TRIES; i++) {
      const port = await freePort();
      const started = await startNginx(dir, root, port);
      if (started) {
        return {
          ...common,
          kind: started.version,
          url: `http://127.0.0.1:${port}/`,
          close: async () => {
            started.child.kill();
            await new Promise((ok) => started.child.once("exit", ok));
            rmSync(dir, { recursive: true, force: true });
          },
        };
      }
    }
    throw new Error(`nginx did not start on a loopback port; see ${join(dir, "error.log")}`);
  }
  const server = fileServer(root);
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    ...common,
    kind: "node:http file server (no nginx here)",
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    close: async () => {
      await new Promise((ok) => server.close(ok));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startNginx(
  dir: string,
  root: string,
  port: number,
): Promise<{ child: ChildProcess; version: string } | undefined> {
  const conf = join(dir, "nginx.conf");
  const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`;
  writeFileSync(
    conf,
    [
      // One process in the foreground: the bench's client makes one request at a time.
      "daemon off;",
      "master_process off;",
      `pid ${join(dir, "nginx.pid")};`,
      `error_log ${join(dir, "error.log")} warn;`,
      "events { worker_connections 64; }",
      "http {",
      "  access_log off;",
      "  sendfile on;",
      "  tcp_nopush on;",
      "  default_type application/octet-stream;",
      `  ${["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(temp).join(" ")}`,
      `  server { listen 127.0.0.1:${port}; root ${root}; }`,
      "}",
      "",
    ].join("\n"),
  );
  const child = spawn(NGINX, ["-p", dir, "-e", join(dir, "error.log"), "-c", conf], { stdio: "ignore" });
  const exited = new Promise<undefined>((ok) => child.once("exit", () => ok(undefined)));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const up = await Promise.race([answers(`http://127.0.0.1:${port}/`), exited]);
    if (up === undefined) return undefined;
    if (up) return { child, version: `nginx ${up}` };
    await new Promise((ok) => setTimeout(ok, 20));
  }
  child.kill();
  return undefined;
}

/** The nginx version from the Server header once something answers on the URL, false until then. */
function answers(url: string): Promise<string | false> {
  return new Promise((ok) => {
    get(url, (res) => {
      res.resume();
      const server = String(res.headers.server ?? "");
      ok(server.startsWith("nginx") ? server.slice("nginx/".length) || "?" : false);
    }).on("error", () => ok(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createNetServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

/** The fallback: files under root by path, 404 for anything else. */
function fileServer(root: string): Server {
  return createHttpServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    const file = join(root, path);
    let size: number;
    try {
      const st = statSync(file);
      if (!st.isFile()) throw new Error("not a file");
      size = st.size;
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": size });
    createReadStream(file).pipe(res);
  });
}
