import { describeStore } from "../store/describe.ts";
import { Store } from "../store/store.ts";

const s = new Store("/tmp/gc-tiny");
const d = await describeStore(s);
console.log(
  JSON.stringify(
    d.forecast_groups.map((g) => ({
      ...g,
      variables: g.variables.map((v) => `${v.name}<-${v.stored} ${v.dtype} ${v.shape} ${v.chunks} packed=${v.packed}`),
    })),
    null,
    1,
  ),
);
console.log(d.embeddings);
const g = await s.forecastGroup("forecast/global");
const tcc = g.variables.get("tcc")!;
const vals = await tcc.array.read([
  [0, 1],
  [0, 1],
  [0, 91],
  [0, 180],
]);
let nan = 0,
  mn = Infinity,
  mx = -Infinity;
for (const v of vals) {
  if (Number.isNaN(v)) nan++;
  else {
    mn = Math.min(mn, v);
    mx = Math.max(mx, v);
  }
}
console.log("tcc", nan, mn, mx);
for (const name of ["t2m", "u10", "v10", "msl", "tp_1h"]) {
  const v = g.variables.get(name)!;
  const a = await v.array.read([
    [1, 2],
    [0, 7],
    [0, 91],
    [0, 180],
  ]);
  let mn = Infinity,
    mx = -Infinity,
    s = 0,
    z = 0;
  for (const x of a) {
    mn = Math.min(mn, x);
    mx = Math.max(mx, x);
    s += x;
    if (x === 0) z++;
  }
  console.log(name, mn, mx, s / a.length, z / a.length);
}
