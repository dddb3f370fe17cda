// The deploy/ manifests run the way a container engine and Kubernetes would run them, on this
// machine: the image's ENV and ENTRYPOINT from deploy/Containerfile, the pod's envFrom/env (with
// fieldRef labels and $(VAR) expansion in args), volumes mapped to local directories by claim
// name, and /app (the image's working copy) mapped to this checkout. Nothing else of the test
// process's environment reaches a pod, so a variable a manifest forgets is missing here too.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";

export const ROOT = resolve(import.meta.dirname, "../..");
export const DEPLOY = join(ROOT, "deploy");
const WORKDIR = mkdtempSync(join(tmpdir(), "gridcast-pod-workdir-"));
chmodSync(WORKDIR, 0o555);

// biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML
export type Manifest = Record<string, any>;

/** Every document of a manifest file; `edit` changes the text first (as run-cycle.sh's sed does). */
export function manifests(file: string, edit: (text: string) => string = (t) => t): Manifest[] {
  const text = edit(readFileSync(join(DEPLOY, "k8s", file), "utf8"));
  return parseAllDocuments(text).map((d) => {
    if (d.errors.length) throw d.errors[0];
    return d.toJS() as Manifest;
  });
}

export function one(docs: Manifest[], kind: string): Manifest {
  const found = docs.filter((d) => d.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0];
}

export interface Image {
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  user: string;
  expose: number[];
  healthcheck: string;
  /** Paths the runtime stage copies from the build stage. */
  copied: string[];
}

/** The runtime (last) stage of deploy/Containerfile. */
export function image(): Image {
  const text = readFileSync(join(DEPLOY, "Containerfile"), "utf8").replace(/\\\n/g, " ");
  const lines = text.split("\n").filter((l) => l.trim() && !l.trim().startsWith("#"));
  const last = lines.slice(lines.findLastIndex((l) => /^FROM\s/.test(l)));
  const img: Image = { env: {}, entrypoint: [], cmd: [], user: "", expose: [], healthcheck: "", copied: [] };
  for (const line of last) {
    const [, word, rest] = /^(\w+)\s+(.*)$/.exec(line.trim()) ?? [];
    if (word === "ENV") for (const [, k, v] of rest.matchAll(/(\w+)=(\S+)/g)) img.env[k] = v;
    if (word === "ENTRYPOINT") img.entrypoint = JSON.parse(rest);
    if (word === "CMD") img.cmd = JSON.parse(rest);
    if (word === "USER") img.user = rest.trim();
    if (word === "EXPOSE") img.expose = rest.split(/\s+/).map(Number);
    if (word === "HEALTHCHECK") img.healthcheck = rest;
    if (word === "COPY" && rest.startsWith("--from=")) img.copied.push(rest.split(/\s+/)[1]);
  }
  return img;
}

export interface Pod {
  name: string;
  labels: Record<string, string>;
  /** Variables the engine adds (JOB_COMPLETION_INDEX for an indexed job). */
  engineEnv?: Record<string, string>;
  /** Secrets by name: what the operator created (the example in config.yaml otherwise). */
  secrets: Record<string, Record<string, string>>;
  configMaps: Record<string, Record<string, string>>;
  /** Claim name → local directory. */
  claims: Record<string, string>;
  /** Variables that differ because all pods share one machine (a port per pod). */
  hostOverrides?: Record<string, string>;
}

/** $(VAR) → its value when VAR is defined, as Kubernetes expands env values and args; $$ escapes. */
export function expand(s: string, env: Record<string, string>): string {
  return s.replace(/\$(\$)?\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, escaped, name) =>
    escaped ? `$(${name})` : name in env ? env[name] : all,
  );
}

function fieldRef(path: string, pod: Pod): string {
  const label = /^metadata\.labels\['(.+)'\]$/.exec(path);
  if (label) {
    assert.ok(label[1] in pod.labels, `the pod has label ${label[1]}`);
    return pod.labels[label[1]];
  }
  if (path === "metadata.name") return pod.name;
  throw new Error(`fieldRef ${path} is not modelled`);
}

/** The command line and environment the container of `spec` (a pod template's spec) runs with. */
export function containerRun(spec: Manifest, pod: Pod): { argv: string[]; env: Record<string, string> } {
  assert.equal(spec.containers.length, 1, "one container per pod");
  const c = spec.containers[0];
  const img = image();
  const mounts: [string, string][] = (c.volumeMounts ?? []).map((m: Manifest) => {
    const vol = spec.volumes.find((v: Manifest) => v.name === m.name);
    assert.ok(vol?.persistentVolumeClaim, `volume ${m.name} is a claim`);
    const local = pod.claims[vol.persistentVolumeClaim.claimName];
    assert.ok(local, `claim ${vol.persistentVolumeClaim.claimName} is mapped`);
    return [m.mountPath, local];
  });
  // The image's files are this checkout; the container's mounts are local directories.
  const local = (v: string) => {
    for (const [mount, dir] of [...mounts, ["/app", ROOT] as [string, string]]) {
      if (v === mount || v.startsWith(`${mount}/`)) return dir + v.slice(mount.length);
    }
    return v;
  };
  const env: Record<string, string> = { ...img.env, HOSTNAME: pod.name, ...(pod.engineEnv ?? {}) };
  for (const from of c.envFrom ?? []) {
    const source = from.configMapRef
      ? pod.configMaps[from.configMapRef.name]
      : from.secretRef
        ? pod.secrets[from.secretRef.name]
        : undefined;
    assert.ok(source, `envFrom ${JSON.stringify(from)} exists`);
    Object.assign(env, source);
  }
  for (const e of c.env ?? []) {
    if ("value" in e) env[e.name] = expand(String(e.value), env);
    else if (e.valueFrom?.fieldRef) env[e.name] = fieldRef(e.valueFrom.fieldRef.fieldPath, pod);
    else throw new Error(`env ${e.name}: only value and fieldRef are modelled`);
  }
  Object.assign(env, pod.hostOverrides ?? {});
  for (const k of Object.keys(env)) env[k] = local(env[k]);
  const entry = c.command ?? img.entrypoint;
  const args = (c.command ? (c.args ?? []) : (c.args ?? img.cmd)).map((a: string) => local(expand(a, env)));
  const argv = [...entry.map(local), ...args];
  // `node` in the image is Node 24: here, the one running the tests.
  if (argv[0] === "node") argv[0] = process.execPath;
  return { argv, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } };
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function start(run: { argv: string[]; env: Record<string, string> }): {
  child: ChildProcess;
  done: Promise<Ran>;
  stderr: () => string;
} {
  // The image's working directory is read-only for the pod's user: nothing may depend on writing it.
  const child = spawn(run.argv[0], run.argv.slice(1), {
    env: run.env,
    cwd: WORKDIR,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => {
    stdout += d;
  });
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  const done = new Promise<Ran>((ok) => child.on("close", (code, signal) => ok({ code, signal, stdout, stderr })));
  return { child, done, stderr: () => stderr };
}

/** ConfigMaps and Secrets of config.yaml by name, with `data`/`stringData` as plain records. */
export function configObjects(): {
  configMaps: Record<string, Record<string, string>>;
  secrets: Record<string, Record<string, string>>;
} {
  const configMaps: Record<string, Record<string, string>> = {};
  const secrets: Record<string, Record<string, string>> = {};
  for (const d of manifests("config.yaml")) {
    if (d.kind === "ConfigMap") configMaps[d.metadata.name] = { ...d.data };
    if (d.kind === "Secret") secrets[d.metadata.name] = { ...d.stringData };
  }
  return { configMaps, secrets };
}
