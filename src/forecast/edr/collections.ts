// What EDR says about the forecast groups: one collection per group (id in the ~ form), its
// extent, parameters (canonical names, units, the registry's meaning), CRS, formats and the
// queries it offers; and the runs as instances. Built from the group's metadata alone.

import { isoNoZone } from "../../store/describe.ts";
import type { ForecastGroup } from "../../store/store.ts";
import { tildeId } from "../listing.ts";
import { CRS84, measurementType } from "./encode.ts";
import { WITHIN_UNITS } from "./geometry.ts";

export const OUTPUT_FORMATS = ["CoverageJSON", "GeoJSON", "CSV"];
export const QUERY_TYPES = ["position", "radius", "area", "cube", "trajectory"] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

const WGS84_WKT =
  'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433],AXIS["Longitude",EAST],AXIS["Latitude",NORTH]]';
const GREGORIAN = "https://www.opengis.net/def/uom/ISO-8601/0/Gregorian";

const QUERY_WORDS: Record<QueryType, string> = {
  position: "Series at points: coords=POINT(lon lat) or MULTIPOINT((lon lat),...); the nearest node of each, as /point",
  radius: "Nodes within a great-circle distance of a point: coords=POINT(lon lat), within, within-units (km, mi, m)",
  area: "Nodes inside a polygon: coords=POLYGON((lon lat,...)) or MULTIPOLYGON(...)",
  cube: "Nodes in a box: bbox=west,south,east,north, z for levels",
  trajectory: "One sample per vertex of coords=LINESTRING(lon lat,...) (LINESTRING M: the vertex's valid time)",
};

/** Valid time in RFC 3339. */
const valid = (run: number, lead: number) => `${isoNoZone(run + lead * 3_600_000)}Z`;
export const instanceId = (run: number) => `${isoNoZone(run)}Z`;

function unionBbox(group: ForecastGroup): number[] {
  const boxes = group.grids.map((g) => g.grid.bbox);
  return [
    Math.min(...boxes.map((b) => b[0])),
    Math.min(...boxes.map((b) => b[1])),
    Math.max(...boxes.map((b) => b[2])),
    Math.max(...boxes.map((b) => b[3])),
  ];
}

function temporal(group: ForecastGroup, runs: number[]) {
  const times = runs.flatMap((r) => group.leads.map((l) => r + l * 3_600_000));
  const first = Math.min(...times);
  const last = Math.max(...times);
  return {
    interval: [[`${isoNoZone(first)}Z`, `${isoNoZone(last)}Z`]],
    values: runs.map((r) => `${valid(r, group.leads[0])}/${valid(r, group.leads[group.leads.length - 1])}`),
    trs: GREGORIAN,
  };
}

function parameterNames(group: ForecastGroup) {
  const out: Record<string, unknown> = {};
  for (const v of group.variables.values()) {
    const levels = v.roles.includes("level") ? group.levels : undefined;
    out[v.name] = {
      type: "Parameter",
      id: v.name,
      label: v.entry.long_name,
      description: `${v.entry.long_name}; ${v.temporal.description}. Also asked for as: ${[v.stored, ...v.entry.aliases].filter((a, i, all) => a !== v.name && all.indexOf(a) === i).join(", ") || "(no alias)"}`,
      dataType: "float",
      unit: { label: { en: v.units }, symbol: v.units },
      observedProperty: {
        ...(v.entry.standard_name ? { id: `https://vocab.nerc.ac.uk/standard_name/${v.entry.standard_name}/` } : {}),
        label: v.entry.long_name,
      },
      measurementType: measurementType({ id: v.name, entry: v.entry, units: v.units, temporal: v.temporal }),
      // The registry's own words: instantaneous or accumulated, over which window.
      temporal: v.temporal,
      aliases: v.entry.aliases,
      ...(levels
        ? {
            extent: {
              vertical: {
                interval: [[String(Math.min(...levels)), String(Math.max(...levels))]],
                values: levels.map(String),
                vrs: "pressure level, hPa",
              },
            },
          }
        : {}),
    };
  }
  return out;
}

function dataQueries(href: string) {
  const out: Record<string, unknown> = {};
  for (const q of QUERY_TYPES) {
    out[q] = {
      link: {
        href: `${href}/${q}`,
        rel: "data",
        title: `${q} query`,
        variables: {
          title: `${q[0].toUpperCase()}${q.slice(1)} query`,
          description: QUERY_WORDS[q],
          query_type: q,
          output_formats: OUTPUT_FORMATS,
          default_output_format: "CoverageJSON",
          crs_details: [{ crs: "CRS84", wkt: WGS84_WKT }],
          ...(q === "radius" ? { within_units: Object.keys(WITHIN_UNITS) } : {}),
          // The cube's z is a pressure level, named by its value.
          ...(q === "cube" ? { height_units: ["hPa"] } : {}),
        },
      },
    };
  }
  return out;
}

/** A collection (or, with `run`, one instance of it) as /edr/collections/{id} answers it. */
export function collectionOf(group: ForecastGroup, base: string, run?: number) {
  const id = tildeId(group.id);
  const href = `${base}/edr/collections/${id}`;
  const self = run === undefined ? href : `${href}/instances/${instanceId(run)}`;
  const title = typeof group.attrs.title === "string" ? group.attrs.title : group.name;
  const queries = dataQueries(self);
  if (run === undefined) {
    queries.instances = {
      link: {
        href: `${href}/instances`,
        rel: "data",
        title: "runs",
        variables: {
          title: "Instances",
          description: "The runs of this group, each queried under /instances/{instanceId}/...",
          query_type: "instances",
          output_formats: OUTPUT_FORMATS,
          default_output_format: "CoverageJSON",
          crs_details: [{ crs: "CRS84", wkt: WGS84_WKT }],
        },
      },
    };
  }
  return {
    id: run === undefined ? id : instanceId(run),
    title: run === undefined ? title : `${title}, run ${instanceId(run)}`,
    description:
      run === undefined
        ? `Forecast group ${group.id}: without datetime a query answers the latest run, every lead`
        : `Run ${instanceId(run)} of ${group.id}`,
    keywords: ["forecast", group.name],
    links: [
      { href: self, rel: "self", type: "application/json", title },
      ...(run === undefined
        ? [{ href: `${href}/instances`, rel: "data", type: "application/json", title: "runs" }]
        : [{ href, rel: "collection", type: "application/json", title }]),
    ],
    extent: {
      spatial: { bbox: [unionBbox(group)], crs: CRS84 },
      temporal: temporal(group, run === undefined ? group.runs : [run]),
      ...(group.levels
        ? {
            vertical: {
              interval: [[String(Math.min(...group.levels)), String(Math.max(...group.levels))]],
              values: group.levels.map(String),
              vrs: `pressure level, ${group.levelUnits ?? "hPa"}`,
            },
          }
        : {}),
    },
    data_queries: queries,
    crs: ["CRS84"],
    output_formats: OUTPUT_FORMATS,
    parameter_names: parameterNames(group),
  };
}
