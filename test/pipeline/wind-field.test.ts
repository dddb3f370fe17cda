// The wind files a build writes per lead of a wind-arrow layer: listed in the catalog, beside the
// tiles, small, and decoding (by an independent PNG decoder and the header's own numbers) to the
// store's 10 m u/v within half a quantization step at every node they keep; a rebuild that reuses
// the leads keeps them (hard links to the same files).
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Catalog } from "../../src/published/layout.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { decodeRgba } from "../render/decode.ts";
import { build, layerField } from "./build-fixture.ts";

const dirs: string[] = [];
after(() => cleanup(...dirs));
const LEADS = [0, 3];
const LATEST = 1;

describe("wind files for animation", () => {
  let storeDir: string;
  let out: string;
  let dir: string;
  let catalog: Catalog;
  const opts = () => ({
    store: storeDir,
    out,
    maxZoom: 1,
    groups: ["forecast/global"],
    vars: ["u10", "v10"],
    leads: LEADS,
  });

  before(async () => {
    storeDir = await sampleStore();
    out = tempDir();
    dirs.push(storeDir, out);
    await build(opts());
    dir = realpathSync(join(out, "current"));
    catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
  });

  const arrows = () => catalog.layers.find((l) => l.id === "global.wind_arrows")!;

  test("every lead of the wind-arrow layer names its wind file, and only that layer does", () => {
    assert.ok(arrows(), catalog.layers.map((l) => l.id).join());
    const leads = arrows().runs[0].leads;
    assert.deepEqual(
      leads.map((l) => l.hours),
      LEADS,
    );
    for (const ld of leads) {
      assert.ok(ld.wind, `lead ${ld.hours}`);
      assert.ok(ld.wind.startsWith("/tiles/global.wind_arrows/"), ld.wind);
      assert.ok(existsSync(join(dir, ld.wind)), ld.wind);
    }
    for (const l of catalog.layers.filter((x) => x.id !== "global.wind_arrows")) {
      assert.ok(
        l.runs.every((r) => r.leads.every((ld) => ld.wind === undefined)),
        l.id,
      );
    }
  });

  test("the files decode to the store's u/v within half a step at the nodes they keep", async () => {
    const store = new Store(storeDir);
    for (const ld of arrows().runs[0].leads) {
      const header = JSON.parse(readFileSync(join(dir, ld.wind!), "utf8"));
      const pngPath = join(dir, ld.wind!, "..", header.png);
      const size = statSync(pngPath).size;
      assert.ok(size < 300_000, `lead ${ld.hours}: ${size} bytes`);
      const img = await decodeRgba(readFileSync(pngPath));
      assert.equal(img.width, header.width);
      assert.equal(img.height, header.height);
      const u = await layerField(store, "forecast/global", "u10", LATEST, ld.hours);
      const v = await layerField(store, "forecast/global", "v10", LATEST, ld.hours);
      const { lat, lon } = u.group.grid;
      const nlon = lon.length;
      let checked = 0;
      let moving = 0;
      for (let r = 0; r < header.height; r++) {
        for (let c = 0; c < header.width; c++) {
          // The node a header position names, found on the store's own axes.
          const la = header.lat0 + r * header.dlat;
          const lo = header.lon0 + c * header.dlon;
          const i = lat.findIndex((x) => Math.abs(x - la) < 1e-6);
          const j = lon.findIndex((x) => Math.abs(x - lo) < 1e-6);
          assert.ok(i >= 0 && j >= 0, `row ${r} col ${c}: (${la}, ${lo}) is a node`);
          const k = (r * header.width + c) * 4;
          assert.equal(img.data[k + 2], 255, "known");
          const gotU = header.u.offset + header.u.scale * img.data[k];
          const gotV = header.v.offset + header.v.scale * img.data[k + 1];
          const wantU = u.field[i * nlon + j];
          const wantV = v.field[i * nlon + j];
          assert.ok(Math.abs(gotU - wantU) <= header.u.scale / 2 + 1e-4, `u at (${la}, ${lo}): ${gotU} vs ${wantU}`);
          assert.ok(Math.abs(gotV - wantV) <= header.v.scale / 2 + 1e-4, `v at (${la}, ${lo}): ${gotV} vs ${wantV}`);
          if (Math.hypot(wantU, wantV) > 1) moving++;
          checked++;
        }
      }
      assert.ok(checked > 1000 && moving > checked / 4, `checked ${checked}, moving ${moving}`);
      // A step of at most 1/255 of the lead's range: fine enough to steer a particle.
      assert.ok(header.u.scale < 0.5 && header.v.scale < 0.5, `steps ${header.u.scale}, ${header.v.scale}`);
      assert.equal(header.wrap, true, "a global grid wraps");
    }
  });

  test("a rebuild that reuses the leads links their wind files", async () => {
    const before = arrows().runs[0].leads.map((ld) => statSync(join(dir, ld.wind!)).ino);
    // One lead more: the build is new, the two leads built before are linked.
    const again = await build({ ...opts(), leads: [...LEADS, 5] });
    assert.ok(again.totals.reused > 0, "leads reused");
    const next = realpathSync(join(out, "current"));
    assert.notEqual(next, dir);
    const inodes = arrows().runs[0].leads.map((ld) => statSync(join(next, ld.wind!)).ino);
    assert.deepEqual(inodes, before);
    const fresh = JSON.parse(readFileSync(join(next, "catalog.json"), "utf8")) as Catalog;
    const five = fresh.layers.find((l) => l.id === "global.wind_arrows")!.runs[0].leads.find((l) => l.hours === 5)!;
    assert.ok(existsSync(join(next, five.wind!)), "the new lead's wind file is written");
  });
});
