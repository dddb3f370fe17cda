// The stable id of a dataset found at the store root: the `root_group_name` setting when given,
// else the store directory's (or URL's) last path segment without a .zarr suffix, made a valid
// group name. `gcs/era5.zarr` → forecast/era5; `.../forecast/dyn` → forecast/dyn.
import { ConfigError } from "../errors.ts";

const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function rootGroupName(root: string, configured?: string): string {
  if (configured) {
    if (!GROUP_NAME.test(configured)) {
      throw new ConfigError(`root_group_name must be 1-64 letters, digits, "_", "." or "-", got "${configured}"`);
    }
    return configured;
  }
  let path = root;
  try {
    if (/^https?:\/\//i.test(root)) path = decodeURIComponent(new URL(root).pathname);
  } catch {
    path = root;
  }
  const last =
    path
      .replace(/[\\/]+$/, "")
      .split(/[\\/]/)
      .pop() ?? "";
  const name = last
    .replace(/\.zarr\d?$/i, "")
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64);
  return name || "root";
}
