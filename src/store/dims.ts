// Common spellings of the forecast dimensions, mapped to the roles gridcast reads by. The names
// come from the producers gridcast meets: cfgrib (time, step, number, isobaricInhPa), ECMWF/ERA5
// and WeatherBench2 (prediction_timedelta, level), dynamical.org (init_time, lead_time,
// ensemble_member), CF (forecast_reference_time, forecast_period, realization), CDS ERA5 (valid_time,
// pressure_level), CMIP (plev).
export type Role = "time" | "lead" | "level" | "member" | "lat" | "lon";
/**
 * A variable's dimension: one of the roles, "single" (a dimension of one entry read at index 0), or
 * "fixed", read at one index per variable (anemoi-datasets' variables axis: each variable one entry).
 */
export type DimRole = Role | "single" | "fixed";

const ROLE_NAMES: Record<Role, string[]> = {
  // valid_time last: cfgrib writes it beside time and step as an auxiliary coordinate; only the new
  // CDS ERA5 layout makes it the time dimension itself (an analysis without leads).
  // WRF's XTIME (minutes since the simulation start, on its Time dimension) after them all.
  time: ["init_time", "forecast_reference_time", "reference_time", "time", "run", "init", "valid_time", "xtime"],
  lead: ["lead_time", "step", "prediction_timedelta", "lead", "forecast_period"],
  level: ["level", "isobaricinhpa", "pressure_level", "plev", "lev"],
  member: ["number", "ensemble_member", "realization", "member", "ensemble"],
  lat: ["lat", "latitude", "y_lat"],
  lon: ["lon", "longitude", "x_lon"],
};

const BY_NAME = new Map<string, Role>();
for (const [role, names] of Object.entries(ROLE_NAMES) as [Role, string[]][]) {
  for (const n of names) BY_NAME.set(n, role);
}

export function roleOf(dimName: string): Role | undefined {
  return BY_NAME.get(dimName.toLowerCase());
}

/** Preference among names of one role (lower first): init_time wins over time, for example. */
export function rolePreference(name: string): number {
  const role = roleOf(name);
  return role ? ROLE_NAMES[role].indexOf(name.toLowerCase()) : Number.POSITIVE_INFINITY;
}
