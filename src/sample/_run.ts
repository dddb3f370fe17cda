import { writeSample } from "./index.ts";

const preset = (process.argv[2] ?? "tiny") as "tiny";
const t0 = performance.now();
const s = await writeSample(`${process.env.GC_DIR ?? "/tmp"}/gc-${preset}`, {
  preset,
  seed: 1,
  force: true,
  onProgress: (l) => process.stderr.write(`${((performance.now() - t0) / 1000).toFixed(2)} ${l}\n`),
});
console.log(
  s.seconds,
  s.files,
  s.bytes,
  s.embeddings.items.length,
  s.embeddings.missing.length,
  s.embeddings.tiles.length,
);
