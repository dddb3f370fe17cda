import { Store } from "../store/store.ts";

const s = new Store("/tmp/gc-demo");
const g = await s.forecastGroup("forecast/global");
for (const name of ["t2m"]) {
  const v = g.variables.get(name)!;
  const a = await v.array.read([
    [0, 1],
    [2, 3],
    [590, 630],
    [400, 401],
  ]);
  console.log(
    name,
    Array.from(a)
      .map((x, i) => `${g.grid.lat[590 + i]}:${x.toFixed(1)}`)
      .join(" "),
  );
}
