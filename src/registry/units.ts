// Unit conversion between the spellings real stores use (UDUNITS/CF strings as xarray, cfgrib,
// ERA5, dynamical.org and COSMO/ICON write them) and gridcast's canonical units. Each known
// spelling maps to a quantity and an affine transform to that quantity's base unit; two units
// convert when they share a quantity. Water amounts treat 1 kg m-2 as 1 mm (density of water),
// which is how every producer above means it.

export type Converter = (x: number) => number;

interface UnitDef {
  quantity: string;
  /** base = value * scale + offset */
  scale: number;
  offset: number;
}

const DEFS: [string[], string, number, number][] = [
  [["k", "kelvin", "degk", "deg_k", "degrees_kelvin"], "temperature", 1, 0],
  [
    ["degc", "°c", "deg_c", "degree_celsius", "degrees_celsius", "celsius", "c", "deg c", "degree c"],
    "temperature",
    1,
    273.15,
  ],
  [
    ["degf", "°f", "deg_f", "degree_fahrenheit", "degrees_fahrenheit", "fahrenheit"],
    "temperature",
    5 / 9,
    273.15 - (32 * 5) / 9,
  ],
  [["pa", "pascal", "pascals", "n m-2"], "pressure", 1, 0],
  [["hpa", "mbar", "mb", "millibar", "millibars", "hectopascal"], "pressure", 100, 0],
  [["kpa", "kilopascal"], "pressure", 1000, 0],
  [["bar"], "pressure", 100_000, 0],
  // Water depth in metres.
  [["m", "metre", "meter", "metres", "meters", "m of water equivalent"], "water", 1, 0],
  [["mm", "millimetre", "millimeter", "millimetres", "millimeters", "kg m-2", "kg/m2", "kg.m-2"], "water", 1e-3, 0],
  [["cm", "centimetre", "centimeter"], "water", 1e-2, 0],
  // Water rate in mm per hour.
  [["kg m-2 s-1", "kg/m2/s", "kg.m-2.s-1", "mm s-1", "mm/s"], "water_rate", 3600, 0],
  [["mm h-1", "mm/h", "mm hr-1", "mm/hr", "mm hour-1", "kg m-2 h-1", "kg/m2/h", "kg m-2 hr-1"], "water_rate", 1, 0],
  [["mm d-1", "mm/d", "mm day-1", "mm/day", "kg m-2 d-1", "kg m-2 day-1", "kg/m2/day"], "water_rate", 1 / 24, 0],
  [["m h-1", "m/h", "m hr-1"], "water_rate", 1000, 0],
  [["m s-1", "m/s", "ms-1", "m.s-1", "meter second-1", "metre second-1", "meters per second"], "speed", 1, 0],
  [["km h-1", "km/h", "kmh", "km hr-1"], "speed", 1 / 3.6, 0],
  [["kt", "kts", "knot", "knots"], "speed", 1852 / 3600, 0],
  [["1", "fraction", "0-1", "(0 - 1)", "dimensionless", "unitless"], "fraction", 1, 0],
  [["%", "percent", "per cent", "pct"], "fraction", 0.01, 0],
  [["m2 s-2", "m2/s2", "m^2/s^2"], "geopotential", 1, 0],
  [["kg kg-1", "kg/kg"], "mixing", 1, 0],
  [["g kg-1", "g/kg"], "mixing", 1e-3, 0],
];

const BY_SPELLING = new Map<string, UnitDef>();
for (const [names, quantity, scale, offset] of DEFS) {
  for (const n of names) BY_SPELLING.set(n, { quantity, scale, offset });
}

/** One spelling per unit: lower case, single spaces, exponents without ** or ^ ("kg m**-2" → "kg m-2"). */
export function normaliseUnit(unit: string): string {
  return unit
    .trim()
    .toLowerCase()
    .replace(/\*\*|\^/g, "")
    .replace(/\s+/g, " ");
}

/** The definition of a unit spelling, or undefined when gridcast does not know it. */
function defOf(unit: string): UnitDef | undefined {
  return BY_SPELLING.get(normaliseUnit(unit));
}

/** True when gridcast knows this unit spelling. */
export function knownUnit(unit: string): boolean {
  return defOf(unit) !== undefined;
}

/**
 * A water rate spelled as a speed: a depth of water per second ("m s-1", lwe_precipitation_rate as
 * the Met Office stores it) means mm h-1 × 3.6e6 when the quantity asked for is a water rate.
 */
const DEPTH_PER_SECOND: UnitDef = { quantity: "water_rate", scale: 3_600_000, offset: 0 };

/**
 * A function converting values in `from` to values in `to`, or undefined when the two are not
 * both known units of one quantity. Equal spellings convert by identity even when unknown.
 */
export function converter(from: string, to: string): Converter | undefined {
  if (normaliseUnit(from) === normaliseUnit(to)) return (x) => x;
  const b = defOf(to);
  let a = defOf(from);
  if (a?.quantity === "speed" && a.scale === 1 && b?.quantity === "water_rate") a = DEPTH_PER_SECOND;
  if (!a || !b || a.quantity !== b.quantity) return undefined;
  if (a.scale === b.scale && a.offset === b.offset) return (x) => x;
  const scale = a.scale / b.scale;
  const offset = (a.offset - b.offset) / b.scale;
  return (x) => x * scale + offset;
}
