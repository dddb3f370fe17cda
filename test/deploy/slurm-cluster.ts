// A single-node Slurm cluster for one test file: munged, slurmctld and slurmd from Debian's
// slurm-wlm and munge, with a fresh munge key, config, state and logs in a temporary directory and
// ports picked free, run as root (slurmd must be). stop() ends the three daemons by their pids.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { tempDir, until } from "../helpers/harness.ts";

/** Hang detector for the cluster to come up (the node idle in sinfo). */
const START_TIMEOUT_MS = 60_000;

export interface SlurmCluster {
  dir: string;
  /** Environment for sbatch/squeue/sinfo against this cluster. */
  env: NodeJS.ProcessEnv;
  stop(): void;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
  const port = (s.address() as { port: number }).port;
  await new Promise((ok) => s.close(ok));
  return port;
}

export async function startSlurm(): Promise<SlurmCluster> {
  if (process.getuid?.() !== 0) throw new Error("the Slurm test starts slurmd, which must run as root");
  const dir = tempDir("gridcast-slurm-");
  chmodSync(dir, 0o755); // munged refuses a socket below a directory others cannot search
  for (const d of ["state", "spool", "log", "run", "munge"]) mkdirSync(join(dir, d));
  chmodSync(join(dir, "munge"), 0o700);
  const key = join(dir, "munge", "munge.key");
  execFileSync("mungekey", ["-c", "-k", key]);
  chmodSync(key, 0o600);
  const sock = join(dir, "run", "munge.sock");
  const pidFiles = ["munged", "slurmctld", "slurmd"].map((d) => join(dir, "run", `${d}.pid`));
  const stop = () => {
    for (const f of pidFiles.reverse()) {
      if (!existsSync(f)) continue;
      try {
        process.kill(Number(readFileSync(f, "utf8").trim()));
      } catch {
        // already gone
      }
    }
  };
  try {
    execFileSync("/usr/sbin/munged", [
      `--key-file=${key}`,
      `--socket=${sock}`,
      `--pid-file=${pidFiles[0]}`,
      `--log-file=${join(dir, "log", "munged.log")}`,
      `--seed-file=${join(dir, "munge", "seed")}`,
    ]);
    const host = hostname();
    const [ctld, slurmd] = [await freePort(), await freePort()];
    const conf = join(dir, "slurm.conf");
    writeFileSync(
      conf,
      [
        "ClusterName=gridcast-test",
        `SlurmctldHost=${host}`,
        "AuthType=auth/munge",
        "CredType=cred/munge",
        `AuthInfo=socket=${sock}`,
        "SlurmUser=root",
        "SlurmdUser=root",
        `StateSaveLocation=${join(dir, "state")}`,
        `SlurmdSpoolDir=${join(dir, "spool")}`,
        `SlurmctldPidFile=${pidFiles[1]}`,
        `SlurmdPidFile=${pidFiles[2]}`,
        `SlurmctldPort=${ctld}`,
        `SlurmdPort=${slurmd}`,
        `SlurmctldLogFile=${join(dir, "log", "slurmctld.log")}`,
        `SlurmdLogFile=${join(dir, "log", "slurmd.log")}`,
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SchedulerType=sched/builtin",
        "SelectType=select/cons_tres",
        "ReturnToService=2",
        "MpiDefault=none",
        `NodeName=${host} CPUs=2 State=UNKNOWN`,
        "PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
      ].join("\n"),
    );
    const env = { ...process.env, SLURM_CONF: conf };
    execFileSync("/usr/sbin/slurmctld", ["-f", conf], { env });
    execFileSync("/usr/sbin/slurmd", ["-f", conf], { env });
    await until(
      "the Slurm node idle",
      () => /\bidle\b/.test(execFileSync("sinfo", ["-h", "-o", "%T"], { env, encoding: "utf8" })),
      START_TIMEOUT_MS,
    );
    return { dir, env, stop };
  } catch (e) {
    stop();
    throw e;
  }
}
