// Place search, offline: the places the build carries (places.json in the build root, the names the
// orientation layer labels), loaded on first use. Matches a name's start, or any word's start,
// letter case and accents aside ("zurich" finds Zürich), largest places first; picking one centres
// the map on it. No geocoding service is asked.

const PLACES = "places.json";
const MAX_SUGGESTIONS = 8;

/** Lower case, accents off: what matching compares. */
const fold = (s) =>
  s
    .normalize("NFD")
    .replace(/\p{Mn}/gu, "")
    .toLowerCase();

let loaded;
function places() {
  loaded ??= fetch(PLACES)
    .then((r) => (r.ok ? r.json() : { places: [] }))
    .then((doc) =>
      (doc.places ?? []).map(([name, lat, lon, population, capital]) => ({
        name,
        lat,
        lon,
        population,
        capital: capital === 1,
        key: fold(name),
      })),
    )
    .catch(() => []);
  return loaded;
}

/** Up to `max` places whose name, or a word of it, starts with `text`; largest first (the file's order). */
export async function findPlaces(text, max = MAX_SUGGESTIONS) {
  const q = fold(text.trim());
  if (!q) return [];
  const out = [];
  for (const p of await places()) {
    if (p.key.startsWith(q) || p.key.includes(` ${q}`) || p.key.includes(`-${q}`)) out.push(p);
    if (out.length >= max) break;
  }
  return out;
}

/** How a place reads in the suggestions: its name, and its population to tell namesakes apart. */
export function placeLabel(p) {
  const people = p.population >= 1e6 ? `${(p.population / 1e6).toFixed(1)} M` : `${Math.round(p.population / 1000)} k`;
  return `${p.name} (${people}${p.capital ? ", capital" : ""})`;
}

/**
 * Wires an <input type=search> and its <datalist>: suggestions while typing, and `go(place)` when
 * a suggestion is picked or Enter is pressed on text that matches one (the first, the largest).
 */
export function placeSearch(input, list, go) {
  let shown = [];
  let seq = 0;
  const pick = async () => {
    const text = input.value;
    let p = shown.find((s) => placeLabel(s) === text);
    if (!p) p = (await findPlaces(text, 1))[0];
    if (!p) {
      input.setCustomValidity("No place of that name in the map's places");
      input.reportValidity();
      return;
    }
    input.setCustomValidity("");
    input.value = p.name;
    input.dataset.found = JSON.stringify({ name: p.name, lat: p.lat, lon: p.lon });
    go(p);
  };
  input.addEventListener("focus", () => places(), { once: true });
  input.addEventListener("input", async () => {
    const mine = ++seq;
    input.setCustomValidity("");
    const found = await findPlaces(input.value);
    if (mine !== seq) return;
    // A suggestion picked from the list arrives as an input event with its full label.
    if (found.length && shown.some((s) => placeLabel(s) === input.value)) return pick();
    shown = found;
    list.replaceChildren(...found.map((p) => new Option(placeLabel(p))));
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      pick();
    }
  });
}
