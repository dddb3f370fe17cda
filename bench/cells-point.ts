// /point on a 1-million-cell octahedral reduced Gaussian grid (O500, 1,018,000 points) against a
// regular 0.25° grid (1,038,240 points), both written by xarray (bench/cells_point_stores.py) and
// served by one process each, driven by wrk with a fresh random point per request (so neither the
// answer memo nor a warm chunk of the last point does the work). Rounds alternate the two. Prints
// req/s and the server's CPU per request (this process: both servers run in it, one at a time
// under load), and their ratios; target: the cells as fast as the regular grid (ratio ≥ ~1).
//   node bench/cells-point.ts [seconds per round, default 10] [rounds, default 2]
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { BENCH_DIR, benchServer } from "./lib.ts";

const run$ = promisify(execFile);
const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 2);
const dir = join(BENCH_DIR, "cells-point");
if (!existsSync(join(dir, "regular.zarr"))) {
  mkdirSync(dir, { recursive: true });
  process.stderr.write("writing the O500 and 0.25° stores with xarray…\n");
  execFileSync("/usr/bin/python3", [join(import.meta.dirname, "cells_point_stores.py"), dir], { stdio: "inherit" });
}

/** A wrk script asking for a random point each request (a fixed seed: both grids get the same points). */
function script(name: string, path: string, key: string): string {
  const file = join(dir, `point-${name}-${process.pid}.lua`);
  writeFileSync(
    file,
    `math.randomseed(42)
wrk.headers["X-API-Key"] = "${key}"
request = function()
  local lat = math.random() * 170 - 85
  local lon = math.random() * 360 - 180
  return wrk.format("GET", string.format("${path}?lat=%.5f&lon=%.5f&var=t2m", lat, lon))
end
`,
  );
  return file;
}

async function wrk(base: string, lua: string) {
  const cpu0 = process.cpuUsage();
  const { stdout } = await run$("wrk", ["-t2", "-c32", `-d${seconds}s`, "-s", lua, base], { maxBuffer: 1 << 20 });
  const cpu = process.cpuUsage(cpu0);
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  if (non2xx || !requests) throw new Error(`wrk: ${non2xx} non-2xx of ${requests}\n${stdout}`);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]), cpuUs: (cpu.user + cpu.system) / requests };
}

const servers = {
  cells: await benchServer(join(dir, "octa.zarr"), { max_heavy_requests: 1000 }),
  regular: await benchServer(join(dir, "regular.zarr"), { max_heavy_requests: 1000 }),
};
try {
  const sum = { cells: { rps: 0, cpuUs: 0 }, regular: { rps: 0, cpuUs: 0 } };
  const luas: Record<string, string> = {};
  for (const [name, srv] of Object.entries(servers)) {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    // Warm: the group opened, the cells' index built, before any round.
    const warm = await fetch(`${srv.url}/point?lat=10&lon=20&var=t2m`, { headers: { "X-API-Key": key } });
    if (warm.status !== 200) throw new Error(`${name} /point answered ${warm.status}: ${await warm.text()}`);
    luas[name] = script(name, "/point", key);
  }
  for (let i = 0; i < rounds; i++) {
    for (const name of ["regular", "cells"] as const) {
      const r = await wrk(servers[name].url, luas[name]);
      sum[name].rps += r.rps / rounds;
      sum[name].cpuUs += r.cpuUs / rounds;
      process.stderr.write(
        `round ${i + 1} ${name}: ${r.rps.toFixed(0)} req/s, ${r.cpuUs.toFixed(1)} µs server CPU per request\n`,
      );
    }
  }
  console.log(
    `/point, random points: O500 cells ${sum.cells.rps.toFixed(0)} req/s, ${sum.cells.cpuUs.toFixed(1)} µs; ` +
      `regular 0.25° ${sum.regular.rps.toFixed(0)} req/s, ${sum.regular.cpuUs.toFixed(1)} µs; ` +
      `ratio cells/regular req/s ${(sum.cells.rps / sum.regular.rps).toFixed(2)}, CPU ${(sum.regular.cpuUs / sum.cells.cpuUs).toFixed(2)} (≥ 1: as fast)`,
  );
} finally {
  for (const s of Object.values(servers)) await s.close();
  for (const name of Object.keys(servers)) rmSync(join(dir, `point-${name}-${process.pid}.lua`), { force: true });
}
