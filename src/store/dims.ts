// Common spellings of the forecast dimensions, mapped to the roles gridcast reads by.
export type Role = "time" | "lead" | "level" | "lat" | "lon";

const ROLE_NAMES: Record<Role, string[]> = {
  time: ["time", "init_time", "reference_time", "forecast_reference_time", "run", "init"],
  lead: ["lead_time", "step", "prediction_timedelta", "lead", "forecast_period"],
  level: ["level", "isobaricinhpa", "pressure_level", "plev", "lev"],
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
