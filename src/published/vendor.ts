// The front-end files the viewer loads from vendor/, copied into a build that ships the viewer, so
// a CDN copy of the build works without gridcast serve (which serves the same paths from
// node_modules, see VENDOR_MOUNTS in http/static-files.ts). Only what the page fetches: about 1 MB.
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const MODULES = resolve(import.meta.dirname, "../../node_modules");

/** [source below node_modules, target below the build's vendor/]. */
export const VIEWER_VENDOR_FILES: [string, string][] = [
  ["leaflet/dist/leaflet-src.esm.js", "leaflet/leaflet-src.esm.js"],
  ["leaflet/dist/leaflet.css", "leaflet/leaflet.css"],
  ["leaflet/dist/images", "leaflet/images"],
  ["topojson-client/dist/topojson-client.min.js", "topojson-client/topojson-client.min.js"],
  ["world-atlas/countries-110m.json", "world-atlas/countries-110m.json"],
  ["world-atlas/countries-50m.json", "world-atlas/countries-50m.json"],
  ["pmtiles/dist/pmtiles.js", "pmtiles/pmtiles.js"],
];

export function copyViewerVendor(buildDir: string): void {
  for (const [from, to] of VIEWER_VENDOR_FILES) {
    const src = join(MODULES, from);
    if (!existsSync(src)) continue;
    const dst = join(buildDir, "vendor", to);
    mkdirSync(dirname(dst), { recursive: true });
    cpSync(src, dst, { recursive: true, dereference: true });
  }
}
