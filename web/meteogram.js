// The meteogram: a clicked place's forecast across every lead of a run, one row per parameter
// (temperature, precipitation bars over their intervals, wind speed with its direction, pressure,
// cloud cover), read from the public series route (api/forecast/series, the numbers /point gives,
// from the same patch) in the units the legends use. The panel names the run and the patch that
// answered, closes on Escape or its button, and carries each row's numbers in data attributes
// (data-times, data-values) so what it draws can be checked.

const API = "api/forecast/series";

/** The rows, in order: which catalog layers feed each, and how it is drawn. */
const ROWS = [
  { key: "temperature", title: "Temperature", pick: (l) => l.variable === "t2m", draw: "line", colour: "#c0392b" },
  {
    key: "precipitation",
    title: "Precipitation",
    pick: (l) => l.temporal?.kind === "accumulated" && /^(tp|precip|rain)/.test(l.variable),
    draw: "bars",
    colour: "#2471a3",
  },
  { key: "wind", title: "Wind", pick: (l) => l.variable === "u10", partner: "v10", draw: "wind", colour: "#1f2a33" },
  { key: "pressure", title: "Pressure", pick: (l) => l.variable === "msl", draw: "line", colour: "#6c3483" },
  { key: "cloud", title: "Cloud cover", pick: (l) => l.variable === "tcc", draw: "bars", colour: "#7f8c8d" },
];

/** Stored-variable base layers of the global group, one per row (a patch answers where it covers the place). */
export function meteogramSources(layers) {
  const bases = layers.filter((l) => l.role === "base" && l.kind === "global" && (l.level ?? null) === null);
  const out = [];
  for (const row of ROWS) {
    const layer = bases.find(row.pick);
    if (!layer) continue;
    const partner = row.partner ? bases.find((l) => l.variable === row.partner && l.group === layer.group) : null;
    if (row.partner && !partner) continue;
    out.push({ row, layer, partner });
  }
  return out;
}

async function series(layer, lat, lon, run, units) {
  const q = new URLSearchParams({ layer: layer.id, lat: lat.toFixed(4), lon: lon.toFixed(4), units: units(layer) });
  // The run the map shows when this layer has it, else the layer's latest.
  if (run && layer.runs.some((r) => r.run === run)) q.set("run", run);
  const res = await fetch(`${API}?${q}`);
  if (!res.ok) {
    let detail = `HTTP ${res.status}`;
    try {
      detail = (await res.json()).detail ?? detail;
    } catch {}
    throw new Error(detail);
  }
  return res.json();
}

/**
 * Every row's series for a place: { row, series, partner? } or { row, error }. `units(layer)` is
 * the unit label to ask for: the one the user picked for the legend (km/h, °F), else "display".
 */
export async function loadMeteogram(sources, lat, lon, run, units = () => "display") {
  return Promise.all(
    sources.map(async ({ row, layer, partner }) => {
      try {
        const [a, b] = await Promise.all([
          series(layer, lat, lon, run, units),
          partner ? series(partner, lat, lon, run, units) : null,
        ]);
        return { row, series: a, partner: b };
      } catch (e) {
        return { row, error: e.message };
      }
    }),
  );
}

const SVG = "http://www.w3.org/2000/svg";
const svgEl = (tag, attrs = {}) => {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  return n;
};
const el = (tag, className, text = "") => {
  const n = document.createElement(tag);
  if (className) n.className = className;
  n.textContent = text;
  return n;
};

const WIDTH = 560;
const HEIGHT = 64;
const PAD = 4;

const DECIMALS = { "°C": 1, "°F": 0, hPa: 0, "%": 0, "m/s": 1, "km/h": 0, kn: 0, mm: 1 };
const fmt = (v, units) => (v === null || v === undefined ? "–" : `${v.toFixed(DECIMALS[units] ?? 1)} ${units}`);

/** Where each valid time sits across the chart, and the midnight (UTC) ticks between them. */
function timeAxis(times) {
  const t = times.map((s) => Date.parse(`${s}Z`));
  const t0 = t[0];
  const t1 = t.at(-1);
  const span = Math.max(1, t1 - t0);
  const x = (ms) => PAD + ((WIDTH - 2 * PAD) * (ms - t0)) / span;
  const days = [];
  const day = 86_400_000;
  for (let d = Math.ceil(t0 / day) * day; d <= t1; d += day) days.push(d);
  return { t, x, days };
}

function chart(row, times, values, units, extra) {
  const svg = svgEl("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "meteogram-chart", role: "img" });
  const { t, x, days } = timeAxis(times);
  for (const d of days) {
    svg.append(svgEl("line", { x1: x(d), x2: x(d), y1: 0, y2: HEIGHT, class: "meteogram-day" }));
  }
  const finite = values.filter((v) => typeof v === "number");
  if (!finite.length) return svg;
  const bars = row.draw === "bars";
  let lo = bars ? 0 : Math.min(...finite);
  let hi = Math.max(...finite);
  if (row.key === "cloud") hi = Math.max(hi, 100);
  if (hi - lo < 1e-9) {
    lo -= 1;
    hi += 1;
  }
  const y = (v) => HEIGHT - PAD - ((HEIGHT - 2 * PAD) * (v - lo)) / (hi - lo);
  if (bars) {
    // Each amount over its interval (start → valid time); instantaneous values a narrow bar.
    const intervals = extra?.intervals;
    values.forEach((v, i) => {
      if (typeof v !== "number") return;
      const end = x(t[i]);
      const start = intervals?.[i] ? x(Date.parse(`${intervals[i].start}Z`)) : end - 3;
      const w = Math.max(2, end - start - 1);
      svg.append(svgEl("rect", { x: end - w, y: y(v), width: w, height: Math.max(0, y(lo) - y(v)), fill: row.colour }));
    });
  } else {
    let d = "";
    values.forEach((v, i) => {
      if (typeof v !== "number") return;
      d += `${d && typeof values[i - 1] === "number" ? "L" : "M"}${x(t[i]).toFixed(1)},${y(v).toFixed(1)}`;
    });
    svg.append(svgEl("path", { d, fill: "none", stroke: row.colour, "stroke-width": 2 }));
  }
  if (row.draw === "wind" && extra?.directions) {
    // An arrow per lead pointing where the wind goes.
    extra.directions.forEach((deg, i) => {
      if (deg === null || typeof values[i] !== "number") return;
      const g = svgEl("path", {
        d: "M0,-6 L3,3 L0,1 L-3,3 Z",
        fill: row.colour,
        transform: `translate(${x(t[i]).toFixed(1)},${(HEIGHT - 10).toFixed(1)}) rotate(${(deg + 180) % 360})`,
      });
      svg.append(g);
    });
  }
  const label = (text, yy) => {
    const n = svgEl("text", { x: WIDTH - PAD, y: yy, "text-anchor": "end", class: "meteogram-scale" });
    n.textContent = text;
    svg.append(n);
  };
  label(fmt(hi, units), 12);
  label(fmt(lo, units), HEIGHT - 4);
  return svg;
}

/** The panel's rows for loaded data; the header names the run and the patch(es) that answered. */
export function drawMeteogram(panel, { lat, lon, rows, place }) {
  const body = panel.querySelector(".meteogram-rows");
  const sources = new Set();
  let run = null;
  let times = null;
  const out = [];
  for (const r of rows) {
    const line = el("div", "meteogram-row");
    line.dataset.param = r.row.key;
    if (r.error) {
      line.append(el("div", "meteogram-title", `${r.row.title}: not available (${r.error})`));
      line.dataset.error = r.error;
      out.push(line);
      continue;
    }
    const s = r.series;
    run ??= s.run;
    times ??= s.times;
    sources.add(s.region ?? s.group.replace(/^forecast\//, ""));
    let values = s.values;
    let units = s.units;
    const extra = { intervals: s.intervals };
    if (r.row.draw === "wind") {
      const v = r.partner.values;
      values = s.values.map((u, i) => (typeof u === "number" && typeof v[i] === "number" ? Math.hypot(u, v[i]) : null));
      // Where the wind blows from, as the value popup says it.
      extra.directions = s.values.map((u, i) =>
        typeof u === "number" && typeof v[i] === "number"
          ? Math.round(((Math.atan2(-u, -v[i]) * 180) / Math.PI + 360) % 360)
          : null,
      );
      line.dataset.u = JSON.stringify(s.values);
      line.dataset.v = JSON.stringify(v);
      units = s.units;
    }
    line.dataset.times = JSON.stringify(s.times);
    line.dataset.values = JSON.stringify(values);
    line.dataset.units = units;
    line.dataset.run = s.run;
    line.dataset.source = s.region ?? s.group;
    const now = values.find((v) => typeof v === "number");
    const interval = r.row.draw === "bars" && s.temporal?.kind === "accumulated" ? " per interval" : "";
    line.append(
      el("div", "meteogram-title", `${r.row.title} (${units}${interval})`),
      chart(r.row, s.times, values, units, extra),
    );
    line.title = `${r.row.title}: first lead ${fmt(now ?? null, units)}`;
    out.push(line);
  }
  body.replaceChildren(...out);
  const head = panel.querySelector(".meteogram-place");
  head.textContent = place;
  const meta = panel.querySelector(".meteogram-meta");
  meta.textContent = run
    ? `run ${run.replace("T", " ").slice(0, 16)} UTC · answered by ${[...sources].join(", ")}`
    : "no forecast here";
  if (times) meta.append(el("div", "meteogram-days", dayLabels(times)));
  panel.dataset.lat = String(lat);
  panel.dataset.lon = String(lon);
  if (run) panel.dataset.run = run;
  panel.dataset.state = "loaded";
}

function dayLabels(times) {
  const f = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
  const first = new Date(`${times[0]}Z`);
  const last = new Date(`${times.at(-1)}Z`);
  return `${f.format(first)} → ${f.format(last)} (UTC; lines at midnight)`;
}

/** The panel element (made once): header, rows, close button; Escape closes it. */
export function meteogramPanel(container, onClose) {
  const panel = el("aside", "meteogram");
  panel.id = "meteogram";
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-label", "Forecast at the clicked place");
  panel.hidden = true;
  const head = el("div", "meteogram-head");
  const close = el("button", "meteogram-close", "×");
  close.type = "button";
  close.setAttribute("aria-label", "Close the forecast panel");
  head.append(el("strong", "meteogram-place"), el("div", "meteogram-meta"), close);
  panel.append(head, el("div", "meteogram-rows"));
  const hide = () => {
    if (panel.hidden) return;
    panel.hidden = true;
    panel.dataset.state = "closed";
    onClose?.();
  };
  close.addEventListener("click", hide);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") hide();
  });
  container.append(panel);
  return { panel, hide };
}
