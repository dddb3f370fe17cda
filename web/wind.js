// Animated wind: particles carried by the 10 m wind of the valid time shown, drawn with fading
// trails on a canvas over the map. The flow comes from the wind file the build writes per lead of
// the global wind-arrow layer (catalog `wind`: a JSON header and an RGB PNG of u/v bytes). Off by
// default; on a low-power device (reduced motion asked for, two cores or fewer, data saving) the
// switch stays off and says why. The viewer hands over its map and a function naming the header
// URL for the valid time on screen (null when there is none); nothing else is shared.
import { Control, DomEvent, DomUtil } from "./vendor/leaflet/leaflet-src.esm.js";

/** Particles per 1000 CSS px² of map, and at most this many in all. */
const DENSITY = 1.2;
const MAX_PARTICLES = 4000;
/** Screen px a particle moves per frame per m/s (the same at every zoom: the eye reads speed). */
const PX_PER_MS = 0.12;
/** Frames a particle lives before it is dropped somewhere new (spread so they do not pulse). */
const MIN_AGE = 40;
const MAX_AGE = 110;
/** Share of the trail kept each frame: lower is shorter. */
const TRAIL_KEEP = 0.9;
const INK = "rgba(24, 32, 44, 0.85)";

/** Why the animation stays off on this device, or "" when it may run. */
export function lowPowerReason(nav = navigator, media = matchMedia) {
  if (media("(prefers-reduced-motion: reduce)").matches) return "reduced motion is asked for";
  if ((nav.hardwareConcurrency ?? 4) <= 2) return "a device with two cores or fewer";
  if (nav.connection?.saveData) return "data saving is on";
  return "";
}

/** u, v (m/s) at a place, bilinear between the four nodes around it; NaN off the grid or missing. */
export function flowAt(field, lat, lon) {
  const h = field.header;
  let x = (lon - h.lon0) / h.dlon;
  if (h.wrap) x = ((x % h.width) + h.width) % h.width;
  const y = (lat - h.lat0) / h.dlat;
  if (!(y >= 0 && y <= h.height - 1 && x >= 0 && x <= (h.wrap ? h.width : h.width - 1))) return null;
  const x0 = Math.floor(x);
  const y0 = Math.min(h.height - 2, Math.floor(y));
  const x1 = h.wrap ? (x0 + 1) % h.width : Math.min(h.width - 1, x0 + 1);
  const fx = x - x0;
  const fy = y - y0;
  const at = (arr, r, c) => arr[r * h.width + c];
  const lerp = (arr) =>
    (at(arr, y0, x0) * (1 - fx) + at(arr, y0, x1) * fx) * (1 - fy) +
    (at(arr, y0 + 1, x0) * (1 - fx) + at(arr, y0 + 1, x1) * fx) * fy;
  const u = lerp(field.u);
  const v = lerp(field.v);
  return Number.isNaN(u) || Number.isNaN(v) ? null : [u, v];
}

/** The header and the PNG it names, decoded to u and v (NaN where missing). */
async function loadField(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`wind header ${res.status}`);
  const header = await res.json();
  const png = await fetch(new URL(header.png, new URL(url, location.href)));
  if (!png.ok) throw new Error(`wind file ${png.status}`);
  // The bytes as stored: no colour management, no premultiplication.
  const bitmap = await createImageBitmap(await png.blob(), {
    colorSpaceConversion: "none",
    premultiplyAlpha: "none",
  });
  const c = new OffscreenCanvas(header.width, header.height);
  const g = c.getContext("2d", { willReadFrequently: true });
  g.drawImage(bitmap, 0, 0);
  const px = g.getImageData(0, 0, header.width, header.height).data;
  const n = header.width * header.height;
  const u = new Float32Array(n);
  const v = new Float32Array(n);
  for (let k = 0; k < n; k++) {
    const known = px[k * 4 + 2] === 255;
    u[k] = known ? header.u.offset + header.u.scale * px[k * 4] : Number.NaN;
    v[k] = known ? header.v.offset + header.v.scale * px[k * 4 + 1] : Number.NaN;
  }
  return { header, u, v };
}

/**
 * Adds the "Wind" switch to `map` and, while it is on, the particles. `headerUrl()` is asked each
 * frame (a cheap lookup) so a new lead or run swaps the flow without the viewer telling.
 */
export function windAnimation(map, headerUrl) {
  const offReason = lowPowerReason();
  const canvas = DomUtil.create("canvas", "wind-canvas");
  canvas.hidden = true;
  map.getContainer().append(canvas);
  const g = canvas.getContext("2d");
  let on = false;
  let frame = 0;
  let field = null;
  let fieldUrl = null;
  let loading = null;
  let particles = new Float32Array(0); // x, y, age, maxAge per particle (CSS px)
  let moving = false;
  // The view's world size and top-left corner in world px (project()).
  let world = 256;
  let origin = { x: 0, y: 0 };
  // What a test or bench reads: frames run, particles drawn in the last one, and (on asking) the
  // particles (x, y, age, life in CSS px) and the view's Web Mercator frame.
  const stats = {
    frames: 0,
    drawn: 0,
    particles: () => Array.from(particles),
    view: () => ({ world, origin: { x: origin.x, y: origin.y } }),
  };
  canvas.gridcastWind = stats;

  // The switch joins the zoom buttons' bar (one block of controls, nothing new over the map).
  const button = DomUtil.create("button", "wind-toggle");
  button.type = "button";
  button.innerHTML =
    '<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true"><path d="M1 5h9a2 2 0 1 0-2-2M1 8h12a2 2 0 1 1-2 2M1 11h6" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round"/></svg>';
  button.setAttribute("aria-label", "Animated wind");
  button.setAttribute("aria-pressed", "false");
  button.title = offReason ? `Animated wind is off on ${offReason}` : "Animated wind";
  button.disabled = Boolean(offReason);
  DomEvent.disableClickPropagation(button);
  button.addEventListener("click", () => (on ? stop() : start()));
  const bar = map.zoomControl?.getContainer();
  if (bar) bar.append(button);
  else {
    const control = new Control({ position: "topleft" });
    control.onAdd = () => button;
    control.addTo(map);
  }

  const size = () => map.getSize();
  function resize() {
    const { x, y } = size();
    const dpr = devicePixelRatio || 1;
    canvas.width = Math.round(x * dpr);
    canvas.height = Math.round(y * dpr);
    canvas.style.width = `${x}px`;
    canvas.style.height = `${y}px`;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const count = Math.min(MAX_PARTICLES, Math.round(((x * y) / 1000) * DENSITY));
    particles = new Float32Array(count * 4);
    for (let i = 0; i < count; i++) seed(i, true);
  }
  function seed(i, spread) {
    const { x, y } = size();
    particles[i * 4] = Math.random() * x;
    particles[i * 4 + 1] = Math.random() * y;
    const life = MIN_AGE + Math.random() * (MAX_AGE - MIN_AGE);
    particles[i * 4 + 2] = spread ? Math.random() * life : 0;
    particles[i * 4 + 3] = life;
  }

  // Web Mercator of the current view, for screen px ↔ lat/lon without Leaflet's per-call objects.
  function project() {
    world = 256 * 2 ** map.getZoom();
    origin = map.getPixelBounds().min;
  }
  const lonOf = (px) => ((px + origin.x) / world) * 360 - 180;
  const latOf = (py) => {
    const n = Math.PI - (2 * Math.PI * (py + origin.y)) / world;
    return (180 / Math.PI) * Math.atan(Math.sinh(n));
  };

  function step() {
    if (!on) return;
    frame = requestAnimationFrame(step);
    stats.frames++;
    const url = headerUrl();
    if (url !== fieldUrl && loading !== url) {
      loading = url;
      if (url === null) {
        field = null;
        fieldUrl = null;
      } else {
        loadField(url)
          .then((f) => {
            if (loading !== url) return;
            field = f;
            fieldUrl = url;
          })
          .catch(() => {
            if (loading === url) fieldUrl = url; // no file: nothing to animate for this time
            field = null;
          });
      }
    }
    const { x: w, y: h } = size();
    // Fade what is drawn, then draw this frame's moves on top: the trails.
    g.globalCompositeOperation = "destination-in";
    g.fillStyle = `rgba(0, 0, 0, ${TRAIL_KEEP})`;
    g.fillRect(0, 0, w, h);
    g.globalCompositeOperation = "source-over";
    if (!field || moving) return;
    g.strokeStyle = INK;
    g.lineWidth = 1.2;
    g.beginPath();
    let drawn = 0;
    const n = particles.length / 4;
    for (let i = 0; i < n; i++) {
      const k = i * 4;
      const px = particles[k];
      const py = particles[k + 1];
      particles[k + 2] += 1;
      const flow = flowAt(field, latOf(py), lonOf(px));
      if (!flow || particles[k + 2] > particles[k + 3]) {
        seed(i, false);
        continue;
      }
      // North is up on the screen; Mercator stretches north-south as much as east-west locally.
      const nx = px + flow[0] * PX_PER_MS;
      const ny = py - flow[1] * PX_PER_MS;
      if (nx < 0 || nx > w || ny < 0 || ny > h) {
        seed(i, false);
        continue;
      }
      g.moveTo(px, py);
      g.lineTo(nx, ny);
      particles[k] = nx;
      particles[k + 1] = ny;
      drawn++;
    }
    g.stroke();
    stats.drawn = drawn;
  }

  function start() {
    on = true;
    button.setAttribute("aria-pressed", "true");
    canvas.hidden = false;
    project();
    resize();
    frame = requestAnimationFrame(step);
  }
  function stop() {
    on = false;
    button.setAttribute("aria-pressed", "false");
    cancelAnimationFrame(frame);
    canvas.hidden = true;
  }
  // While the map moves the particles would smear: clear, and start afresh where it stops.
  map.on("movestart zoomstart", () => {
    moving = true;
    if (on) g.clearRect(0, 0, canvas.width, canvas.height);
  });
  map.on("moveend zoomend resize", () => {
    moving = false;
    if (!on) return;
    project();
    resize();
  });
  return { canvas, stats, start, stop };
}
