// A store whose exports outgrow every kernel buffer between server and client: the tiny preset
// with a 0.2° global grid and two leads (a whole-globe t2m export is 13 MB) and one large latent
// (8 MiB of float32). Slow and stalled readers of it keep their responses, and slots, open.
import { join } from "node:path";
import { writeSample } from "../../src/sample/index.ts";
import { PRESETS } from "../../src/sample/presets.ts";
import { tempDir } from "./harness.ts";

/** The whole globe at 0.2°, both leads: 13 MB of .npy. */
export const BIG_EXPORT =
  "/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=1" +
  "&lat_min=-90&lat_max=90&lon_min=-180&lon_max=179.8";

export async function bigStore(): Promise<string> {
  const tiny = PRESETS.tiny;
  const global = tiny.groups[0];
  const dir = join(tempDir(), "store");
  await writeSample(dir, {
    custom: {
      ...tiny,
      runs: [tiny.runs[0]],
      leads: [0, 1],
      groups: [{ ...global, step: { num: 1, den: 5 }, chunk: [451, 451], variables: { t2m: "t2m" } }],
      products: { tokens: [256, 256, 32], map: [16, 16, 8], vector: [1, 1, 8] },
      tilePoints: [tiny.tilePoints[0]],
    },
  });
  return dir;
}
