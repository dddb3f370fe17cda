// Temporal meaning: registry defaults, overridden by the store's own metadata, with intervals
// derived from the lead times the store actually has.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { registry } from "../../src/registry/registry.ts";
import { leadIntervals, resolveTemporal, windowFromData, withDataWindow } from "../../src/registry/temporal.ts";

const H = 3_600_000;
const run = Date.UTC(2024, 4, 1);

describe("temporal semantics", () => {
  test("a mean over the previous step is an interval of the store's own step", () => {
    const t = resolveTemporal(registry.resolve("precipitation_surface").temporal, { step_type: "avg" }, [0, 3, 6, 9]);
    assert.equal(t.kind, "mean");
    assert.equal(t.window, "fixed");
    assert.equal("interval_hours" in t && t.interval_hours, 3);
    assert.equal(t.description, "mean over the previous 3 h");
    assert.equal(t.source, "step_type");
    const hourly = resolveTemporal(registry.resolve("precipitation_surface").temporal, {}, [0, 1, 2]);
    assert.equal("interval_hours" in hourly && hourly.interval_hours, 1);
  });
  test("on an irregular axis each value covers the step before it", () => {
    const t = resolveTemporal(registry.resolve("prate").temporal, {}, [0, 3, 6, 12, 24]);
    assert.equal(t.window, "previous_step");
    const iv = leadIntervals(t, run, [0, 3, 6, 12, 24])!;
    assert.deepEqual(
      iv.map((i) => [(i.start - run) / H, (i.end - run) / H]),
      [
        [0, 0],
        [0, 3],
        [3, 6],
        [6, 12],
        [12, 24],
      ],
    );
  });
  test("accumulated since the start covers the whole forecast so far", () => {
    const t = resolveTemporal(registry.resolve("tp").temporal, { GRIB_stepType: "accum" }, [0, 6, 12]);
    assert.equal(t.window, "since_start");
    assert.equal(t.source, "GRIB_stepType");
    const iv = leadIntervals(t, run, [0, 6, 12])!;
    assert.deepEqual(
      iv.map((i) => [(i.start - run) / H, (i.end - run) / H]),
      [
        [0, 0],
        [0, 6],
        [0, 12],
      ],
    );
  });
  test("the store's metadata wins over the registry: cell_methods and GRIB stepType", () => {
    const sum = resolveTemporal(
      registry.resolve("t2m").temporal,
      { cell_methods: "time: sum (interval: 3 hours)" },
      [0, 3],
    );
    assert.equal(sum.kind, "accumulated");
    assert.equal("interval_hours" in sum && sum.interval_hours, 3);
    assert.equal(sum.source, "cell_methods");
    const gust = resolveTemporal(registry.resolve("gust").temporal, { GRIB_stepType: "max" }, [0, 6, 12]);
    assert.equal(gust.kind, "maximum");
    assert.equal("interval_hours" in gust && gust.interval_hours, 6);
    // A fixed window the registry knows (ECMWF's 3-hourly maximum) survives a 6-hourly lead axis.
    const mx = resolveTemporal(registry.resolve("mx2t3").temporal, { GRIB_stepType: "max" }, [0, 6, 12]);
    assert.equal("interval_hours" in mx && mx.interval_hours, 3);
    assert.equal(mx.description, "maximum over the previous 3 h");
    const point = resolveTemporal(registry.resolve("tp").temporal, { cell_methods: "time: point" }, [0, 6]);
    assert.equal(point.kind, "instantaneous");
    assert.equal(leadIntervals(point, run, [0, 6]), undefined);
  });
});

describe("accumulations read from their values", () => {
  const since = () => resolveTemporal(registry.resolve("tp").temporal, { GRIB_stepType: "accum" }, [0, 3, 6, 9, 12]);
  test("drops after 6 and 12 h are resets every 6 h; each lead covers its own bucket", () => {
    const leads = [0, 3, 6, 9, 12, 15];
    const found = windowFromData(leads, [2, 4]);
    assert.deepEqual(found, { window: "since_reset", hours: 6 });
    const t = withDataWindow(since(), found);
    assert.equal(t.window, "since_reset");
    assert.equal(t.source, "data");
    const iv = leadIntervals(t, run, leads)!;
    assert.deepEqual(
      iv.map((i) => [(i.start - run) / H, (i.end - run) / H]),
      [
        [0, 0],
        [0, 3],
        [0, 6],
        [6, 9],
        [6, 12],
        [12, 15],
      ],
    );
  });
  test("values that never fall stay since the start", () => {
    assert.deepEqual(windowFromData([0, 3, 6], []), { window: "since_start" });
    assert.equal(withDataWindow(since(), { window: "since_start" }).window, "since_start");
  });
  test("drops no period explains leave the window undecided, with no intervals stated", () => {
    // A fall right after the start, and resets every 6 h over 12-hourly leads (a reset unseen between them).
    assert.equal(windowFromData([0, 3, 6], [0]).window, "undecided");
    const between = windowFromData([0, 6, 18, 30], [1]);
    assert.equal(between.window, "undecided");
    const t = withDataWindow(since(), between);
    assert.match(t.description, /undecided \(a reset every 6 h falls between stored leads\)/);
    assert.equal(leadIntervals(t, run, [0, 6, 18, 30]), undefined);
  });
});
