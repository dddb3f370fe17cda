// The `units` option of /point and the .npy export: values as stored (the default, for
// analysis), in the unit the maps show ("display": °C, hPa, mm, %, m/s), or in any other unit the
// maps offer for the variable (km/h, kn, °F), through the same transform as legends and popups.
import { InvalidParameterError } from "../errors.ts";
import { toDisplay, unitChoices } from "../registry/display.ts";
import type { DisplayUnit, VariableEntry } from "../registry/registry.ts";

export const UNITS_STORED = "stored";
export const UNITS_DISPLAY = "display";

/** What the option resolved to: null when the values go out as stored. */
export type UnitsChoice = { unit: DisplayUnit; from: string } | null;

/**
 * The unit to answer in. `units` is the variable's canonical unit (what gridcast stores after its
 * own conversion); a store whose unit could not be converted to it cannot be shown in another.
 */
export function chooseUnits(entry: VariableEntry, units: string, requested: string | undefined): UnitsChoice {
  if (requested === undefined || requested === UNITS_STORED || requested === units) return null;
  const choices = unitChoices(entry.style, entry.units);
  const labels = [UNITS_STORED, UNITS_DISPLAY, ...new Set(choices.map((c) => c.units))];
  if (units !== entry.units) {
    throw new InvalidParameterError(
      "units",
      `${entry.name} is stored here in "${units}", which gridcast cannot convert; only units=stored is available`,
      { available: [UNITS_STORED] },
    );
  }
  const unit = requested === UNITS_DISPLAY ? choices[0] : choices.find((c) => c.units === requested);
  if (!unit) {
    throw new InvalidParameterError("units", `unknown units "${requested}" for ${entry.name}`, { available: labels });
  }
  if (unit.units === units && unit.scale === 1 && unit.offset === 0) return null;
  return { unit, from: units };
}

export function convertValue(choice: UnitsChoice, v: number | null): number | null {
  return choice === null || v === null ? v : toDisplay(choice.unit, v);
}

/** Converts each slab in place (they are the stream's own buffers) before it is sent. */
export async function* convertSlabs(
  slabs: AsyncIterable<Float32Array>,
  choice: UnitsChoice,
): AsyncGenerator<Float32Array> {
  if (choice === null) {
    yield* slabs;
    return;
  }
  const { scale, offset } = choice.unit;
  for await (const slab of slabs) {
    for (let i = 0; i < slab.length; i++) slab[i] = slab[i] * scale + offset;
    yield slab;
  }
}

export const unitsParamDescription =
  "Units of the values: `stored` (default; the variable's canonical units, e.g. K, Pa, m, m/s, fraction), " +
  "`display` (the unit the maps show: °C, hPa, mm, %, m/s), or one of the other units the maps offer for the " +
  "variable (e.g. km/h, kn, °F). The answer's `units` names the unit used and `converted_from` the stored one. " +
  "400 for a unit the variable has not, or when the store holds the variable in a unit gridcast cannot convert.";
