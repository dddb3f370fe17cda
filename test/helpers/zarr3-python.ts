// Today's Python Zarr client stack (xarray 2026 + zarr-python 3) for tests that write stores the
// way producers do now and read /data the way most Python users do. The project's shared folder
// builds it into a virtualenv (../shared/clients/xarray-zarr3-venv.sh); `npm test` builds it once
// before any test (bin/test-prereqs.sh), so here it is a quick check. A checkout with no shared
// folder beside it (a clone elsewhere on the same machine) uses the virtualenv that script built,
// at its own default place, when that imports the stack. With neither, a caller that can do
// without falls back to zarrita plus attribute checks, and this prints one line saying the
// current-xarray run did not happen; one that cannot fails with the reason.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const SCRIPT = resolve(import.meta.dirname, "../../../shared/clients/xarray-zarr3-venv.sh");
/** Where the shared script puts its virtualenv unless told otherwise (XARRAY_ZARR3_VENV). */
const BUILT = join(process.env.XARRAY_ZARR3_VENV ?? "/tmp/xarray-zarr3-venv", "bin/python");
/** What the shared script checks before it calls a virtualenv ready. */
const CHECK = 'import xarray, zarr, numcodecs, fsspec, aiohttp; assert zarr.__version__.startswith("3")';
let memo: string | null | undefined;

/** The venv's python (xarray + zarr 3 + pyproj), or null when the shared client script is absent. */
export function zarr3Python(why = "a test"): string | null {
  if (memo !== undefined) return memo;
  if (process.env.GRIDCAST_ZARR3_PYTHON && existsSync(process.env.GRIDCAST_ZARR3_PYTHON)) {
    memo = process.env.GRIDCAST_ZARR3_PYTHON;
    return memo;
  }
  if (!existsSync(SCRIPT)) {
    if (existsSync(BUILT) && spawnSync(BUILT, ["-c", CHECK], { stdio: "ignore" }).status === 0) {
      memo = BUILT;
      return memo;
    }
    console.log(
      `# current xarray + zarr 3 run did not happen for ${why}: ${SCRIPT} is missing and no built stack at ${BUILT}`,
    );
    memo = null;
    return memo;
  }
  // flock: two test files asking at once on a fresh machine must not both build the venv.
  const out = execFileSync("flock", [join("/tmp", "gridcast-zarr3-venv.lock"), "bash", SCRIPT], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  memo = out.trim().split("\n").at(-1) ?? null;
  return memo;
}

/** Like zarr3Python, but a test that cannot do without it fails with the reason. */
export function requireZarr3Python(why = "a test"): string {
  const py = zarr3Python(why);
  if (!py) throw new Error(`xarray + zarr 3 client stack unavailable (needed by ${why})`);
  return py;
}
