// The variable registry as data. Each entry names the canonical (stored) variable, every alias
// real stores use for it (ECMWF short names, CF standard names, ERA5/WeatherBench and
// dynamical.org names), its units, its temporal semantics and, when it is drawn on maps, a style.

export type Temporal = { kind: "instantaneous" } | { kind: "accumulated"; interval: string; interval_hours: number };

/** Canonical value → shown value: shown = value * scale + offset, labelled `units`. */
export interface DisplayUnit {
  units: string;
  scale: number;
  offset: number;
}

export interface MapStyle {
  /** Name of a ramp in render/colormap.ts. */
  colormap: string;
  /** Fixed value range (canonical units) so colours mean the same across runs and lead times. */
  min: number;
  max: number;
  /** Values at or below this are drawn transparent (dry cells of precipitation). */
  transparent_below?: number;
  /** Continuous fields are drawn bilinear; categorical ones keep their nearest node. Default bilinear. */
  resample?: "bilinear" | "nearest";
  /** The unit legends, popups and the value route show; further choices the viewer may switch to. */
  display?: DisplayUnit;
  display_alternatives?: DisplayUnit[];
}

export interface VariableEntry {
  name: string;
  long_name: string;
  units: string;
  standard_name?: string;
  aliases: string[];
  temporal: Temporal;
  style?: MapStyle;
}

const instant: Temporal = { kind: "instantaneous" };
const hourly: Temporal = { kind: "accumulated", interval: "PT1H", interval_hours: 1 };
const sixHourly: Temporal = { kind: "accumulated", interval: "PT6H", interval_hours: 6 };

export const VARIABLES: readonly VariableEntry[] = [
  {
    name: "t2m",
    long_name: "2 metre temperature",
    units: "K",
    standard_name: "air_temperature",
    aliases: ["2t", "2m_temperature", "temperature_2m", "tmp2m", "t_2m", "air_temperature_2m"],
    temporal: instant,
    style: {
      colormap: "thermal",
      min: 223.15,
      max: 323.15,
      display: { units: "°C", scale: 1, offset: -273.15 },
      display_alternatives: [{ units: "°F", scale: 1.8, offset: -459.67 }],
    },
  },
  {
    name: "d2m",
    long_name: "2 metre dewpoint temperature",
    units: "K",
    standard_name: "dew_point_temperature",
    aliases: ["2d", "2m_dewpoint_temperature", "dew_point_temperature_2m"],
    temporal: instant,
  },
  {
    name: "u10",
    long_name: "10 metre U wind component",
    units: "m s-1",
    standard_name: "eastward_wind",
    aliases: ["u10m", "10u", "10m_u_component_of_wind", "wind_u_10m", "ugrd10m"],
    temporal: instant,
    style: {
      colormap: "diverging",
      min: -30,
      max: 30,
      display: { units: "m/s", scale: 1, offset: 0 },
      display_alternatives: [
        { units: "km/h", scale: 3.6, offset: 0 },
        { units: "kn", scale: 3600 / 1852, offset: 0 },
      ],
    },
  },
  {
    name: "v10",
    long_name: "10 metre V wind component",
    units: "m s-1",
    standard_name: "northward_wind",
    aliases: ["v10m", "10v", "10m_v_component_of_wind", "wind_v_10m", "vgrd10m"],
    temporal: instant,
    style: {
      colormap: "diverging",
      min: -30,
      max: 30,
      display: { units: "m/s", scale: 1, offset: 0 },
      display_alternatives: [
        { units: "km/h", scale: 3.6, offset: 0 },
        { units: "kn", scale: 3600 / 1852, offset: 0 },
      ],
    },
  },
  {
    name: "msl",
    long_name: "Mean sea level pressure",
    units: "Pa",
    standard_name: "air_pressure_at_mean_sea_level",
    aliases: ["mslp", "mean_sea_level_pressure", "pressure_reduced_to_mean_sea_level", "prmsl"],
    temporal: instant,
    style: { colormap: "pressure", min: 96000, max: 104000, display: { units: "hPa", scale: 0.01, offset: 0 } },
  },
  {
    name: "tp_1h",
    long_name: "Total precipitation over the previous hour",
    units: "m",
    standard_name: "precipitation_amount",
    aliases: ["scaled_tp_1h", "total_precipitation_1hr", "precipitation_surface", "tp1h", "apcp_1h"],
    temporal: hourly,
    style: {
      colormap: "precipitation",
      min: 0,
      max: 0.01,
      transparent_below: 0.00005,
      display: { units: "mm", scale: 1000, offset: 0 },
    },
  },
  {
    name: "tp_6h",
    long_name: "Total precipitation over the previous six hours",
    units: "m",
    aliases: ["scaled_tp_6h", "total_precipitation_6hr", "tp6h"],
    temporal: sixHourly,
    style: {
      colormap: "precipitation",
      min: 0,
      max: 0.03,
      transparent_below: 0.0001,
      display: { units: "mm", scale: 1000, offset: 0 },
    },
  },
  {
    name: "tcc",
    long_name: "Total cloud cover",
    units: "1",
    standard_name: "cloud_area_fraction",
    aliases: ["total_cloud_cover", "cloud_cover", "tcdc"],
    temporal: instant,
    style: { colormap: "clouds", min: 0, max: 1, display: { units: "%", scale: 100, offset: 0 } },
  },
  {
    name: "t",
    long_name: "Air temperature on pressure levels",
    units: "K",
    aliases: ["temperature", "air_temperature_pl", "tmp"],
    temporal: instant,
    style: {
      colormap: "thermal",
      min: 203.15,
      max: 313.15,
      display: { units: "°C", scale: 1, offset: -273.15 },
      display_alternatives: [{ units: "°F", scale: 1.8, offset: -459.67 }],
    },
  },
  {
    name: "z",
    long_name: "Geopotential on pressure levels",
    units: "m2 s-2",
    standard_name: "geopotential",
    aliases: ["geopotential"],
    temporal: instant,
  },
];
