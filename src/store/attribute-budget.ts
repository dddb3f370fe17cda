// How much of a store's text attribute gridcast passes on in an answer (JSON bodies, response
// headers). Attributes are whatever a producer wrote: a units or long_name of megabytes would
// otherwise travel in every /point body and every export's X-SVC-Field header. Text longer than
// the budget is cut with a note saying so where it is only shown (listings, the export header); a
// variable whose units are longer is refused at discovery (its numbers would go out with units cut
// short), named with the reason in /api/models' `unregistered`.

/**
 * Characters of one text attribute an answer carries at most: room for a CRS's WKT (1–3 KB), and
 * for two such texts within one 8 KiB header line.
 */
export const ATTRIBUTE_MAX_CHARS = 4096;

/**
 * The attribute as answers show it: itself when within `max` characters (the budget unless
 * given), else its start and a note saying it was cut.
 */
export function shownAttribute(value: string, max?: number): string;
export function shownAttribute(value: string | undefined, max?: number): string | undefined;
export function shownAttribute(value: string | undefined, max = ATTRIBUTE_MAX_CHARS): string | undefined {
  if (value === undefined || value.length <= max) return value;
  return `${value.slice(0, max)}… [cut: ${value.length} characters in the store, ${max} shown]`;
}

/** Why a units attribute cannot be served, or undefined when it can. */
export function unitsProblem(units: string | undefined): string | undefined {
  if (units === undefined || units.length <= ATTRIBUTE_MAX_CHARS) return undefined;
  return `its units attribute is ${units.length} characters, longer than the ${ATTRIBUTE_MAX_CHARS} an answer may carry`;
}
