// Which registered variable a stored array is by its CF meaning, when its name is not one the
// registry knows: its standard_name, the height its height coordinate gives and the statistic its
// cell_methods name. MET Norway's air_temperature_2m (2 m) and the Met Office's air_temperature
// (1.5 m: screen level, what the Met Office calls its 2 m temperature) are both t2m. Rules are
// data; a meaning matching none of them leaves the array unregistered, with the reason.

/** What a stored array says about itself beyond its name. */
export interface CfMeaning {
  standardName: string | undefined;
  cellMethods: string | undefined;
  /** Height above the surface in metres, from its height coordinate; undefined when it has none. */
  heightM: number | undefined;
  /** True when the array lies on pressure levels (a level dimension). */
  onLevels: boolean;
}

interface Rule {
  standard: string[];
  /** Canonical name when matched. */
  canonical: string;
  /** Heights the rule accepts (metres); undefined: no height, or any. */
  height?: number[];
  /** Needs a level dimension (true) or its absence (false); undefined: either. */
  levels?: boolean;
  /**
   * The cell_methods statistic over time the rule needs ("sum", "maximum"); "any": whichever;
   * undefined: none (or "point"), as an instantaneous value has.
   */
  method?: string;
  /** With `method`: the interval in hours (undefined: none stated, as since-the-start amounts are). */
  intervalHours?: number;
}

/** Screen level: 2 m, or 1.5 m as the Met Office and BoM measure it. */
const SCREEN = [2, 1.5];
const TEN_M = [10];
const PRECIPITATION = ["precipitation_amount", "lwe_thickness_of_precipitation_amount"];
const EASTWARD = ["eastward_wind", "x_wind", "grid_eastward_wind"];
const NORTHWARD = ["northward_wind", "y_wind", "grid_northward_wind"];

const RULES: readonly Rule[] = [
  { standard: ["air_temperature"], height: SCREEN, levels: false, canonical: "t2m" },
  { standard: ["air_temperature"], levels: true, canonical: "t" },
  { standard: ["dew_point_temperature"], height: SCREEN, levels: false, canonical: "d2m" },
  { standard: ["relative_humidity"], height: SCREEN, levels: false, canonical: "r2" },
  { standard: EASTWARD, height: TEN_M, levels: false, canonical: "u10" },
  { standard: NORTHWARD, height: TEN_M, levels: false, canonical: "v10" },
  { standard: EASTWARD, levels: true, canonical: "u" },
  { standard: NORTHWARD, levels: true, canonical: "v" },
  { standard: ["wind_speed_of_gust"], height: TEN_M, method: "maximum", canonical: "fg10" },
  { standard: ["wind_speed_of_gust"], height: TEN_M, canonical: "gust" },
  { standard: ["air_pressure_at_sea_level", "air_pressure_at_mean_sea_level"], levels: false, canonical: "msl" },
  { standard: ["surface_air_pressure"], levels: false, canonical: "sp" },
  { standard: ["cloud_area_fraction"], levels: false, canonical: "tcc" },
  { standard: PRECIPITATION, method: "sum", canonical: "tp" },
  { standard: PRECIPITATION, method: "sum", intervalHours: 1, canonical: "tp_1h" },
  { standard: PRECIPITATION, method: "sum", intervalHours: 6, canonical: "tp_6h" },
  { standard: PRECIPITATION, method: "sum", intervalHours: 24, canonical: "tp_24h" },
  { standard: ["precipitation_flux", "lwe_precipitation_rate"], method: "any", canonical: "prate" },
  { standard: ["sea_surface_wave_significant_height"], canonical: "swh" },
  { standard: ["specific_humidity"], levels: true, canonical: "q" },
  { standard: ["geopotential"], levels: true, canonical: "z" },
];

/** Heights closer than this (metres) are the same height. */
const HEIGHT_TOLERANCE_M = 0.01;
const INTERVAL_HOURS: Record<string, number> = {
  h: 1,
  hr: 1,
  hour: 1,
  hours: 1,
  min: 1 / 60,
  minute: 1 / 60,
  minutes: 1 / 60,
  s: 1 / 3600,
  second: 1 / 3600,
  seconds: 1 / 3600,
  d: 24,
  day: 24,
  days: 24,
};

/** The statistic over time a cell_methods string names, and its interval in hours when stated. */
export function timeMethod(cellMethods: string | undefined): { method: string; intervalHours?: number } | undefined {
  if (!cellMethods) return undefined;
  const m = /\btime\s*:\s*([a-z_]+)(?:\s*\(\s*interval\s*:\s*([\d.]+)\s*([a-z]+)\s*\))?/i.exec(cellMethods);
  if (!m) return undefined;
  const per = m[3] ? INTERVAL_HOURS[m[3].toLowerCase()] : undefined;
  return {
    method: m[1].toLowerCase(),
    ...(m[2] && per !== undefined ? { intervalHours: Number(m[2]) * per } : {}),
  };
}

/**
 * The canonical variable a CF meaning stands for, or why none: `reason` says what is missing
 * (a height, a cell_methods statistic) so the refusal tells the producer what would make it served.
 */
export function canonicalByMeaning(m: CfMeaning): { canonical: string; rule: string } | { reason: string } {
  const sn = m.standardName?.toLowerCase();
  if (!sn) {
    return {
      reason:
        "not a registered variable name, and no CF standard_name says what it is (name it as a registered " +
        "variable or alias, or give it the standard_name of one; /api/registry lists them)",
    };
  }
  const candidates = RULES.filter((r) => r.standard.includes(sn));
  if (candidates.length === 0) {
    return {
      reason:
        `not a registered variable name, and standard_name ${sn} is not one gridcast maps (name it as a ` +
        "registered variable or alias to serve it; /api/registry lists them)",
    };
  }
  const tm = timeMethod(m.cellMethods);
  for (const r of candidates) {
    if (r.levels !== undefined && r.levels !== m.onLevels) continue;
    const h = m.heightM;
    if (r.height !== undefined && !(h !== undefined && r.height.some((x) => Math.abs(h - x) < HEIGHT_TOLERANCE_M))) {
      continue;
    }
    if (r.method === undefined && tm && tm.method !== "point") continue;
    if (r.method !== undefined && r.method !== "any") {
      if (tm?.method !== r.method) continue;
      if (r.intervalHours !== tm.intervalHours) continue;
    }
    const at = h !== undefined && r.height !== undefined ? ` at ${h} m` : "";
    const how = tm && r.method !== undefined ? `, cell_methods time: ${tm.method}` : "";
    return { canonical: r.canonical, rule: `standard_name ${sn}${at}${how}` };
  }
  const needs = candidates.map((r) => {
    const parts = [r.canonical];
    if (r.height !== undefined) parts.push(`a ${r.height.join(" or ")} m height coordinate`);
    if (r.levels) parts.push("a pressure-level dimension");
    if (r.method === undefined) parts.push("no time statistic in cell_methods");
    else if (r.method !== "any") {
      parts.push(
        `cell_methods "time: ${r.method}${r.intervalHours !== undefined ? ` (interval: ${r.intervalHours} hours)` : ""}"`,
      );
    }
    return parts.length === 1 ? parts[0] : `${parts[0]} needs ${parts.slice(1).join(" and ")}`;
  });
  const had = [
    m.heightM !== undefined ? `height ${m.heightM} m` : "no height coordinate",
    m.cellMethods ? `cell_methods "${m.cellMethods}"` : "no cell_methods",
  ].join(", ");
  return {
    reason: `standard_name ${sn} with ${had} matches no registered variable (${needs.join("; ")})`,
  };
}
