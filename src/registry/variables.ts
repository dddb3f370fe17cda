// The variable registry as data. Each entry names the canonical variable, every alias real stores
// use for it (ECMWF open data and cfgrib short names, GFS/GEFS cfgrib names, ERA5/WeatherBench2
// long names, dynamical.org names, COSMO/ICON names, CF standard names), its canonical units,
// its temporal semantics and, when it is drawn on maps, a style in canonical units. The README's
// registry table is written from this list (test/registry/readme-table.test.ts keeps them equal).

/**
 * What one value means in time. `window` says which interval ending at the valid time it covers:
 * none (`point`), a fixed interval (`fixed`, with `interval`), the step before it (`previous_step`:
 * the interval runs from the previous lead time), the whole forecast so far (`since_start`), the
 * time since the last of the resets every `reset_hours` after the run (`since_reset`: GFS's 6-hour
 * buckets), or one the store leaves open between since-start and buckets (`undecided`, with why).
 */
export type Temporal =
  | { kind: "instantaneous"; window?: "point" }
  | {
      kind: "accumulated" | "mean" | "maximum" | "minimum";
      window?: "fixed";
      interval: string;
      interval_hours: number;
    }
  | { kind: "accumulated" | "mean" | "maximum" | "minimum"; window: "previous_step" | "since_start" }
  | {
      kind: "accumulated" | "mean" | "maximum" | "minimum";
      window: "since_reset";
      /** ISO 8601 duration between resets, e.g. PT6H. */
      reset: string;
      reset_hours: number;
    }
  | { kind: "accumulated" | "mean" | "maximum" | "minimum"; window: "undecided"; undecided_reason: string };

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
  /** Where the names come from, for the README table. */
  sources?: string;
}

const instant: Temporal = { kind: "instantaneous" };
const fixed = (kind: "accumulated" | "maximum" | "minimum" | "mean", hours: number): Temporal => ({
  kind,
  window: "fixed",
  interval: `PT${hours}H`,
  interval_hours: hours,
});
const sinceStart: Temporal = { kind: "accumulated", window: "since_start" };
const stepMean: Temporal = { kind: "mean", window: "previous_step" };
const stepMax: Temporal = { kind: "maximum", window: "previous_step" };
const stepMin: Temporal = { kind: "minimum", window: "previous_step" };

export const VARIABLES: readonly VariableEntry[] = [
  {
    name: "t2m",
    long_name: "2 metre temperature",
    units: "K",
    standard_name: "air_temperature",
    aliases: ["2t", "2m_temperature", "temperature_2m", "tmp2m", "t_2m", "air_temperature_2m", "temp_scrn", "t2"],
    temporal: instant,
    style: {
      colormap: "thermal",
      min: 223.15,
      max: 323.15,
      display: { units: "°C", scale: 1, offset: -273.15 },
      display_alternatives: [{ units: "°F", scale: 1.8, offset: -459.67 }],
    },
    sources: "ECMWF, cfgrib, ERA5/WB2, dynamical, COSMO/ICON (T_2M), MET Norway, BoM (temp_scrn), WRF (T2)",
  },
  {
    name: "d2m",
    long_name: "2 metre dewpoint temperature",
    units: "K",
    standard_name: "dew_point_temperature",
    aliases: ["2d", "2m_dewpoint_temperature", "dew_point_temperature_2m", "td_2m", "dpt2m", "dewpt_scrn"],
    temporal: instant,
    style: { colormap: "thermal", min: 220, max: 310, display: { units: "°C", scale: 1, offset: -273.15 } },
    sources: "ECMWF, cfgrib, ERA5/WB2, dynamical, COSMO/ICON (TD_2M)",
  },
  {
    name: "r2",
    long_name: "2 metre relative humidity",
    units: "%",
    standard_name: "relative_humidity",
    aliases: ["2r", "relative_humidity_2m", "2m_relative_humidity", "relhum_2m", "rh2m", "rh2"],
    temporal: instant,
    style: { colormap: "clouds", min: 0, max: 100, display: { units: "%", scale: 1, offset: 0 } },
    sources: "GFS/GEFS cfgrib, ECMWF (2r), dynamical, COSMO/ICON (RELHUM_2M)",
  },
  {
    // WRF's Q2 is a mixing ratio (vapour per dry air), not a specific humidity (per moist air):
    // about 1 % apart at 2 m, so no specific-humidity name resolves to it.
    name: "q2",
    long_name: "2 metre water vapour mixing ratio",
    units: "kg kg-1",
    standard_name: "humidity_mixing_ratio",
    aliases: ["2m_humidity_mixing_ratio", "mixing_ratio_2m"],
    temporal: instant,
    style: { colormap: "clouds", min: 0, max: 0.025, display: { units: "g/kg", scale: 1000, offset: 0 } },
    sources: "WRF (Q2)",
  },
  {
    name: "u10",
    long_name: "10 metre U wind component",
    units: "m s-1",
    standard_name: "eastward_wind",
    aliases: ["u10m", "10u", "10m_u_component_of_wind", "wind_u_10m", "ugrd10m", "u_10m", "uwnd10m"],
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
    sources: "ECMWF, cfgrib, ERA5/WB2, dynamical, COSMO/ICON (U_10M)",
  },
  {
    name: "v10",
    long_name: "10 metre V wind component",
    units: "m s-1",
    standard_name: "northward_wind",
    aliases: ["v10m", "10v", "10m_v_component_of_wind", "wind_v_10m", "vgrd10m", "v_10m", "vwnd10m"],
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
    sources: "ECMWF, cfgrib, ERA5/WB2, dynamical, COSMO/ICON (V_10M)",
  },
  {
    name: "gust",
    long_name: "Instantaneous 10 metre wind gust",
    units: "m s-1",
    standard_name: "wind_speed_of_gust",
    aliases: ["i10fg", "wind_gust_surface", "gust_surface", "gustsfc", "instantaneous_10m_wind_gust"],
    temporal: instant,
    style: { colormap: "precipitation", min: 0, max: 40, display: { units: "m/s", scale: 1, offset: 0 } },
    sources: "GFS/GEFS cfgrib (gust), ECMWF/ERA5 (i10fg), dynamical",
  },
  {
    name: "fg10",
    long_name: "Maximum 10 metre wind gust since the previous step",
    units: "m s-1",
    standard_name: "wind_speed_of_gust",
    aliases: ["10fg", "vmax_10m", "10m_wind_gust_since_previous_post_processing", "max_wind_gust_10m"],
    temporal: stepMax,
    style: { colormap: "precipitation", min: 0, max: 40, display: { units: "m/s", scale: 1, offset: 0 } },
    sources: "ECMWF open data (10fg), ERA5, COSMO/ICON (VMAX_10M)",
  },
  {
    name: "msl",
    long_name: "Mean sea level pressure",
    units: "Pa",
    standard_name: "air_pressure_at_mean_sea_level",
    aliases: [
      "mslp",
      "mean_sea_level_pressure",
      "pressure_reduced_to_mean_sea_level",
      "prmsl",
      "pmsl",
      "air_pressure_at_sea_level",
    ],
    temporal: instant,
    style: { colormap: "pressure", min: 96000, max: 104000, display: { units: "hPa", scale: 0.01, offset: 0 } },
    sources: "ECMWF, cfgrib (prmsl), ERA5/WB2, dynamical, COSMO/ICON (PMSL)",
  },
  {
    name: "sp",
    long_name: "Surface pressure",
    units: "Pa",
    standard_name: "surface_air_pressure",
    aliases: ["surface_pressure", "pressure_surface", "ps", "pressfc", "surface_air_pressure", "psfc"],
    temporal: instant,
    style: { colormap: "pressure", min: 50000, max: 105000, display: { units: "hPa", scale: 0.01, offset: 0 } },
    sources: "ECMWF, GFS cfgrib, ERA5/WB2, dynamical, COSMO/ICON (PS), WRF (PSFC)",
  },
  {
    name: "tp",
    long_name: "Total precipitation since the start of the forecast",
    units: "m",
    standard_name: "precipitation_amount",
    aliases: ["total_precipitation", "tot_prec", "apcp", "apcpsfc", "precipitation_amount_acc", "accum_prcp"],
    temporal: sinceStart,
    style: {
      colormap: "precipitation",
      min: 0,
      max: 0.05,
      transparent_below: 0.0001,
      display: { units: "mm", scale: 1000, offset: 0 },
    },
    sources:
      "ECMWF open data, GFS/GEFS cfgrib (tp, in kg m-2), ERA5 (hourly: see time axes), COSMO/ICON (TOT_PREC), " +
      "WRF (RAINC + RAINNC, summed)",
  },
  {
    name: "tp_1h",
    long_name: "Total precipitation over the previous hour",
    units: "m",
    standard_name: "precipitation_amount",
    aliases: ["scaled_tp_1h", "total_precipitation_1hr", "tp1h", "apcp_1h"],
    temporal: fixed("accumulated", 1),
    style: {
      colormap: "precipitation",
      min: 0,
      max: 0.01,
      transparent_below: 0.00005,
      display: { units: "mm", scale: 1000, offset: 0 },
    },
    sources: "gridcast samples, WeatherBench2",
  },
  {
    name: "tp_6h",
    long_name: "Total precipitation over the previous six hours",
    units: "m",
    aliases: ["scaled_tp_6h", "total_precipitation_6hr", "tp6h", "tp06"],
    temporal: fixed("accumulated", 6),
    style: {
      colormap: "precipitation",
      min: 0,
      max: 0.03,
      transparent_below: 0.0001,
      display: { units: "mm", scale: 1000, offset: 0 },
    },
    sources: "WeatherBench2, Earth2Studio (tp06)",
  },
  {
    name: "tp_24h",
    long_name: "Total precipitation over the previous 24 hours",
    units: "m",
    aliases: ["total_precipitation_24hr", "tp24h"],
    temporal: fixed("accumulated", 24),
    style: {
      colormap: "precipitation",
      min: 0,
      max: 0.08,
      transparent_below: 0.0002,
      display: { units: "mm", scale: 1000, offset: 0 },
    },
    sources: "WeatherBench2",
  },
  {
    name: "prate",
    long_name: "Precipitation rate, mean over the previous step",
    units: "mm h-1",
    standard_name: "precipitation_flux",
    aliases: ["precipitation_surface", "tprate", "mtpr", "mean_total_precipitation_rate", "pratesfc"],
    temporal: stepMean,
    style: {
      colormap: "precipitation",
      min: 0,
      max: 20,
      transparent_below: 0.05,
      display: { units: "mm/h", scale: 1, offset: 0 },
    },
    sources: "dynamical (precipitation_surface), GFS cfgrib (prate), ERA5 (mtpr)",
  },
  {
    name: "tcc",
    long_name: "Total cloud cover",
    units: "1",
    standard_name: "cloud_area_fraction",
    aliases: ["total_cloud_cover", "cloud_cover", "tcdc", "clct", "total_cloud_cover_atmosphere", "tcdcclm"],
    temporal: instant,
    style: { colormap: "clouds", min: 0, max: 1, display: { units: "%", scale: 100, offset: 0 } },
    sources: "ECMWF, GFS cfgrib (tcc/tcdc, in %), ERA5/WB2, dynamical, COSMO/ICON (CLCT, in %)",
  },
  {
    name: "mx2t",
    long_name: "Maximum 2 metre temperature since the previous step",
    units: "K",
    aliases: ["tmax", "maximum_temperature_2m", "maximum_2m_temperature_since_previous_post_processing", "tmax_2m"],
    temporal: stepMax,
    style: { colormap: "thermal", min: 220, max: 320, display: { units: "°C", scale: 1, offset: -273.15 } },
    sources: "ECMWF, GFS cfgrib (tmax), ERA5, dynamical, COSMO/ICON (TMAX_2M)",
  },
  {
    name: "mn2t",
    long_name: "Minimum 2 metre temperature since the previous step",
    units: "K",
    aliases: ["tmin", "minimum_temperature_2m", "minimum_2m_temperature_since_previous_post_processing", "tmin_2m"],
    temporal: stepMin,
    style: { colormap: "thermal", min: 220, max: 320, display: { units: "°C", scale: 1, offset: -273.15 } },
    sources: "ECMWF, GFS cfgrib (tmin), ERA5, dynamical, COSMO/ICON (TMIN_2M)",
  },
  {
    name: "mx2t3",
    long_name: "Maximum 2 metre temperature in the last 3 hours",
    units: "K",
    aliases: ["maximum_2m_temperature_in_the_last_3_hours"],
    temporal: fixed("maximum", 3),
    style: { colormap: "thermal", min: 220, max: 320, display: { units: "°C", scale: 1, offset: -273.15 } },
    sources: "ECMWF open data",
  },
  {
    name: "mn2t3",
    long_name: "Minimum 2 metre temperature in the last 3 hours",
    units: "K",
    aliases: ["minimum_2m_temperature_in_the_last_3_hours"],
    temporal: fixed("minimum", 3),
    style: { colormap: "thermal", min: 220, max: 320, display: { units: "°C", scale: 1, offset: -273.15 } },
    sources: "ECMWF open data",
  },
  {
    name: "mx2t6",
    long_name: "Maximum 2 metre temperature in the last 6 hours",
    units: "K",
    aliases: ["maximum_2m_temperature_in_the_last_6_hours"],
    temporal: fixed("maximum", 6),
    style: { colormap: "thermal", min: 220, max: 320, display: { units: "°C", scale: 1, offset: -273.15 } },
    sources: "ECMWF open data",
  },
  {
    name: "mn2t6",
    long_name: "Minimum 2 metre temperature in the last 6 hours",
    units: "K",
    aliases: ["minimum_2m_temperature_in_the_last_6_hours"],
    temporal: fixed("minimum", 6),
    style: { colormap: "thermal", min: 220, max: 320, display: { units: "°C", scale: 1, offset: -273.15 } },
    sources: "ECMWF open data",
  },
  {
    name: "fg310",
    long_name: "Maximum 10 metre wind gust in the last 3 hours",
    units: "m s-1",
    aliases: ["10fg3", "maximum_10m_wind_gust_in_the_last_3_hours"],
    temporal: fixed("maximum", 3),
    style: { colormap: "precipitation", min: 0, max: 40, display: { units: "m/s", scale: 1, offset: 0 } },
    sources: "ECMWF open data (10fg3; cfgrib fg310)",
  },
  {
    name: "fg610",
    long_name: "Maximum 10 metre wind gust in the last 6 hours",
    units: "m s-1",
    aliases: ["10fg6", "maximum_10m_wind_gust_in_the_last_6_hours"],
    temporal: fixed("maximum", 6),
    style: { colormap: "precipitation", min: 0, max: 40, display: { units: "m/s", scale: 1, offset: 0 } },
    sources: "ECMWF open data (10fg6; cfgrib fg610)",
  },
  {
    name: "swh",
    long_name: "Significant height of combined wind waves and swell",
    units: "m",
    standard_name: "sea_surface_wave_significant_height",
    aliases: ["significant_height_of_combined_wind_waves_and_swell", "htsgw", "htsgwsfc", "hs"],
    temporal: instant,
    style: { colormap: "precipitation", min: 0, max: 12, display: { units: "m", scale: 1, offset: 0 } },
    sources: "ECMWF open data wave model, cfgrib, GFS-Wave (HTSGW)",
  },
  {
    name: "t",
    long_name: "Air temperature on pressure levels",
    units: "K",
    aliases: ["temperature", "air_temperature_pl", "tmp", "ta"],
    temporal: instant,
    style: {
      colormap: "thermal",
      min: 203.15,
      max: 313.15,
      display: { units: "°C", scale: 1, offset: -273.15 },
      display_alternatives: [{ units: "°F", scale: 1.8, offset: -459.67 }],
    },
    sources: "ECMWF, cfgrib, ERA5/WB2, CMIP (ta)",
  },
  {
    name: "u",
    long_name: "U wind component on pressure levels",
    units: "m s-1",
    aliases: ["u_component_of_wind"],
    temporal: instant,
    style: { colormap: "diverging", min: -60, max: 60, display: { units: "m/s", scale: 1, offset: 0 } },
    sources: "ECMWF, cfgrib, ERA5/WB2",
  },
  {
    name: "v",
    long_name: "V wind component on pressure levels",
    units: "m s-1",
    aliases: ["v_component_of_wind"],
    temporal: instant,
    style: { colormap: "diverging", min: -60, max: 60, display: { units: "m/s", scale: 1, offset: 0 } },
    sources: "ECMWF, cfgrib, ERA5/WB2",
  },
  {
    name: "q",
    long_name: "Specific humidity on pressure levels",
    units: "kg kg-1",
    standard_name: "specific_humidity",
    aliases: ["specific_humidity"],
    temporal: instant,
    sources: "ECMWF, cfgrib, ERA5/WB2",
  },
  {
    name: "z",
    long_name: "Geopotential on pressure levels",
    units: "m2 s-2",
    standard_name: "geopotential",
    aliases: ["geopotential"],
    temporal: instant,
    sources: "ECMWF, cfgrib, ERA5/WB2",
  },
];
