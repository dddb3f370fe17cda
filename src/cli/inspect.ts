import type { Command } from "commander";
import { surveyEmbeddings } from "../embeddings/index-writer.ts";
import { describeStore } from "../store/describe.ts";
import { Store } from "../store/store.ts";
import { requireStore } from "./preflight.ts";
import { printJson, settingDefault, settingsFor } from "./settings.ts";

export function registerInspect(program: Command): void {
  program
    .command("inspect")
    .description("describe the forecast groups and embedding items of a store")
    .option("-s, --store <root>", `store root: directory or http(s) URL ${settingDefault("store")}`)
    .option("--json", "print JSON")
    .action(async (opts: { store?: string; json?: boolean }, cmd: Command) => {
      const settings = settingsFor(cmd, { store: opts.store });
      requireStore(settings.store);
      const store = new Store(settings.store, {
        cacheMb: settings.chunk_cache_mb,
        cellGridMb: settings.cell_grid_mb,
        rootGroupName: settings.root_group_name || undefined,
      });
      await store.ping();
      const described = await describeStore(store);
      // The same survey the build makes: the items it would catalogue and what it would leave out.
      const survey = await surveyEmbeddings(store);
      const names = survey.entries.map((e) => e.ref.path).sort();
      const info = {
        ...described,
        embeddings: {
          items: names.length,
          prefixes: [...new Set(names.map((p) => p.split("/").slice(0, 5).join("/")))],
          skipped: survey.skipped,
        },
      };
      if (opts.json) return printJson(info);
      const lines = [`store: ${info.store}`];
      for (const g of info.forecast_groups) {
        lines.push(
          `${g.id}  (${g.kind}, zarr v${g.zarr_format}, ${g.cells ? `${g.cells.count} ${g.cells.layout} cells on ${g.cells.dimension}` : `${g.shape.lat}x${g.shape.lon}`} at ${g.resolution.lat}°, bbox ${g.bbox.join(",")})`,
          `  runs: ${g.runs.join(", ")}`,
          `  found at: ${g.path === "" ? "the store root" : g.path}${g.stored_name !== g.id.slice(9) ? `  (stored name "${g.stored_name}")` : ""}${g.analysis ? "  (analysis: each time is a run with lead 0)" : ""}`,
          `  time axes: ${g.time_axes}`,
          `  leads (h): ${g.lead_hours.join(",")}${g.levels ? `  levels: ${g.levels.join(",")}` : ""}${g.members ? `  members: ${g.members.join(",")}` : ""}`,
        );
        for (const x of g.grids ?? []) {
          lines.push(
            `  grid ${x.coordinates.lat},${x.coordinates.lon}  (${x.kind}, ${x.shape.lat}x${x.shape.lon} at ${x.resolution.lat}°, bbox ${x.bbox.join(",")})`,
          );
        }
        for (const v of g.variables) {
          lines.push(
            `  ${v.name.padEnd(6)} stored ${v.stored}  ${v.dtype} [${v.dims.join(",")}] shape ${v.shape.join("x")} chunks ${v.chunks.join("x")} ${v.codecs.join("+")} ${v.units}${v.stored_units !== v.units ? ` (stored ${v.stored_units})` : ""}${v.packed ? " (packed)" : ""}  ${v.temporal.description}${g.grids ? `  on grid ${v.grid_coordinates.lat},${v.grid_coordinates.lon}` : ""}${v.recognised_by ? `  (by its ${v.recognised_by})` : ""}${v.squeezed ? `  (squeezed ${v.squeezed.join(",")})` : ""}${v.level ? `  (at level ${v.level.value}${v.level.units ? ` ${v.level.units}` : ""})` : ""}${v.turned_with ? `  (grid-relative: turned to true north with ${v.turned_with})` : ""}${v.summed_with ? `  (the sum of ${v.stored} and ${v.summed_with})` : ""}${v.member !== undefined ? `  (member ${v.member} alone)` : ""}`,
          );
        }
        for (const u of g.unregistered) {
          lines.push(
            u.refused
              ? `  refused ${u.stored} (${u.refused.variable}): ${u.refused.problem}`
              : `  unregistered ${u.stored}: ${u.reason}`,
          );
        }
      }
      for (const s of info.skipped_groups) lines.push(`skipped ${s.id}: ${s.reason}`);
      for (const n of info.not_served) lines.push(`${n.path || "(store)"}: ${n.reason}`);
      lines.push(`embeddings: ${info.embeddings.items} items`);
      for (const p of info.embeddings.prefixes) lines.push(`  ${p}`);
      for (const k of info.embeddings.skipped) lines.push(`skipped ${k.path}: ${k.reason}`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
