import type { Command } from "commander";
import { describeStore } from "../store/describe.ts";
import { Store } from "../store/store.ts";
import { requireStore } from "./preflight.ts";
import { printJson, settingsFor } from "./settings.ts";

export function registerInspect(program: Command): void {
  program
    .command("inspect")
    .description("describe the forecast groups and embedding items of a store")
    .option("-s, --store <root>", "store root: directory or http(s) URL")
    .option("--json", "print JSON")
    .action(async (opts: { store?: string; json?: boolean }, cmd: Command) => {
      const settings = settingsFor(cmd, { store: opts.store });
      requireStore(settings.store);
      const store = new Store(settings.store, { cacheMb: settings.chunk_cache_mb });
      await store.ping();
      const info = await describeStore(store);
      if (opts.json) return printJson(info);
      const lines = [`store: ${info.store}`];
      for (const g of info.forecast_groups) {
        lines.push(
          `${g.id}  (${g.kind}, zarr v${g.zarr_format}, ${g.shape.lat}x${g.shape.lon} at ${g.resolution.lat}°, bbox ${g.bbox.join(",")})`,
          `  runs: ${g.runs.join(", ")}`,
          `  leads (h): ${g.lead_hours.join(",")}${g.levels ? `  levels: ${g.levels.join(",")}` : ""}`,
        );
        for (const v of g.variables) {
          lines.push(
            `  ${v.name.padEnd(6)} stored ${v.stored}  ${v.dtype} [${v.dims.join(",")}] shape ${v.shape.join("x")} chunks ${v.chunks.join("x")} ${v.codecs.join("+")} ${v.units}${v.packed ? " (packed)" : ""}`,
          );
        }
        if (g.unregistered.length) lines.push(`  unregistered: ${g.unregistered.join(", ")}`);
      }
      lines.push(`embeddings: ${info.embeddings.items} items`);
      for (const p of info.embeddings.prefixes) lines.push(`  ${p}`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
