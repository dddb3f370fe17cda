// The stable id of a dataset found at the store root: the `root_group_name` setting when given,
// else the store directory's (or URL's) last path segment without a .zarr suffix, made a valid
// group name. `gcs/era5.zarr` → forecast/era5; `.../forecast/dyn` → forecast/dyn. Group names
// below forecast/ that are not URL-safe (a wrfout file's colons, spaces) get an id the same way;
// the stored name stays in the group's metadata (stored_name in /api/models and inspect).
import { createHash } from "node:crypto";
import { ConfigError } from "../errors.ts";

const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Longest group name in an id (what /point and every route accept after forecast/). */
const GROUP_NAME_MAX = 64;
/** Hex digits of the stored name's hash that tell apart two names made the same URL-safe name. */
const NAME_HASH_HEX = 8;

/**
 * The URL-safe group name of a stored name: itself when it already is one, else every run of
 * characters other than letters, digits, "_", "." and "-" made one "-", leading punctuation
 * dropped, cut to 64 characters (`wrfout_d01_2026-11-22_00:00:00` → `wrfout_d01_2026-11-22_00-00-00`).
 */
export function urlSafeName(stored: string): string {
  if (GROUP_NAME.test(stored)) return stored;
  const name = stored
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, GROUP_NAME_MAX);
  return name || "group";
}

/**
 * The name of a stored group whose URL-safe name another group already has: the URL-safe name cut
 * short, then "-" and the first hex digits of the stored name's SHA-256 (stable for that name).
 */
export function disambiguatedName(stored: string): string {
  const hash = createHash("sha256").update(stored).digest("hex").slice(0, NAME_HASH_HEX);
  return `${urlSafeName(stored).slice(0, GROUP_NAME_MAX - NAME_HASH_HEX - 1)}-${hash}`;
}

export function rootGroupName(root: string, configured?: string): string {
  if (configured) {
    if (!GROUP_NAME.test(configured)) {
      throw new ConfigError(`root_group_name must be 1-64 letters, digits, "_", "." or "-", got "${configured}"`);
    }
    return configured;
  }
  const stem = rootStoredName(root);
  return stem.replace(/[^A-Za-z0-9]/g, "") ? urlSafeName(stem) : "root";
}

/** The store directory's (or URL's) last path segment, without a .zarr suffix: the root's stored name. */
export function rootStoredName(root: string): string {
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
  return last.replace(/\.zarr\d?$/i, "");
}
