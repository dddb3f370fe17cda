// Worker thread of the sample writer: writes parts of the store (block rows of a forecast group, or
// the embeddings of one family) into the temporary store directory, several workers at once, each
// compressing its own chunks. Every part is a pure function of (preset, seed, layout), so the
// files are the same whichever worker writes them and in whatever order. One message per part; the
// reply carries what the main thread needs for the summary and the root's consolidated metadata.
import { parentPort } from "node:worker_threads";
import { type EmbeddingSummary, writeEmbeddings } from "./embeddings.ts";
import { WeatherModel } from "./fields.ts";
import { type GroupSummary, type Layout, writeForecastGroup } from "./forecast.ts";
import type { Preset } from "./presets.ts";
import { type Json, ZarrWriter } from "./zarr-writer.ts";

/** Block rows `bands` of forecast group `group`; `metadata`: this part writes the group's documents and coordinates. */
export interface ForecastPart {
  kind: "forecast";
  group: number;
  bands: number[];
  metadata: boolean;
}

export type Part = ForecastPart | { kind: "embeddings"; families: string[] };

export interface PartJob {
  id: number;
  root: string;
  preset: Preset;
  seed: number;
  layout: Layout;
  part: Part;
}

export type PartMessage =
  | { id: number; progress: string }
  | {
      id: number;
      done: {
        files: number;
        bytes: number;
        nodes: [string, Json][];
        forecast?: GroupSummary;
        embeddings?: EmbeddingSummary;
      };
    }
  | { id: number; error: string };

const models = new Map<number, WeatherModel>();

async function run(job: PartJob): Promise<void> {
  const { part, preset } = job;
  const progress = (line: string) => parentPort?.postMessage({ id: job.id, progress: line } satisfies PartMessage);
  const metadata = part.kind === "embeddings" || part.metadata;
  const w = new ZarrWriter(job.root, preset.zstdLevel, { inline: true, metadata });
  let forecast: GroupSummary | undefined;
  let embeddings: EmbeddingSummary | undefined;
  if (part.kind === "forecast") {
    let model = models.get(job.seed);
    if (!model) {
      model = new WeatherModel(job.seed);
      models.set(job.seed, model);
    }
    const g = preset.groups[part.group];
    forecast = await writeForecastGroup(w, model, preset, g, job.layout, progress, part.bands);
  } else {
    embeddings = await writeEmbeddings(w, preset, job.seed, progress, part.families);
  }
  parentPort?.postMessage({
    id: job.id,
    done: { files: w.files, bytes: w.bytes, nodes: w.v3Nodes(), forecast, embeddings },
  } satisfies PartMessage);
}

parentPort?.on("message", (job: PartJob) => {
  run(job).catch((e) => {
    parentPort?.postMessage({ id: job.id, error: (e as Error)?.message ?? String(e) } satisfies PartMessage);
  });
});
