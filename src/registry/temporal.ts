// The temporal meaning of one stored variable: the registry's default, overridden by what the
// store itself says (CF cell_methods, cfgrib's GRIB_stepType, dynamical.org's step_type), and
// made concrete by the group's actual lead times — a "previous step" window over a regular 3 h
// axis is a 3 h interval, over an irregular axis each value has its own interval.
import type { Temporal } from "./variables.ts";

export type ResolvedTemporal = Temporal & {
  /** Where the meaning came from: "registry", "cell_methods", "GRIB_stepType" or "step_type". */
  source: string;
  /** Words for legends and popups ("mean over the previous 3 h"). */
  description: string;
};

/** Hours of a fixed window; undefined for other windows. */
export function fixedHours(t: Temporal): number | undefined {
  return "interval_hours" in t ? t.interval_hours : undefined;
}

type Kind = "instantaneous" | "accumulated" | "mean" | "maximum" | "minimum";

const STEP_TYPES: Record<string, { kind: Kind; window?: "since_start" | "previous_step" }> = {
  instant: { kind: "instantaneous" },
  accum: { kind: "accumulated", window: "since_start" },
  avg: { kind: "mean", window: "previous_step" },
  max: { kind: "maximum", window: "previous_step" },
  min: { kind: "minimum", window: "previous_step" },
};

const CELL_METHODS: Record<string, Kind> = {
  point: "instantaneous",
  sum: "accumulated",
  mean: "mean",
  maximum: "maximum",
  minimum: "minimum",
};

const UNIT_HOURS: Record<string, number> = { minute: 1 / 60, minutes: 1 / 60, hour: 1, hours: 1, day: 24, days: 24 };

/** "time: sum (interval: 3 hours)" → { kind: accumulated, hours: 3 }. */
function fromCellMethods(text: string): { kind: Kind; hours?: number } | undefined {
  const m = /\btime\s*:\s*(point|sum|mean|maximum|minimum)\b(?:\s*\(\s*interval\s*:\s*([\d.]+)\s*(\w+)\s*\))?/i.exec(
    text,
  );
  if (!m) return undefined;
  const kind = CELL_METHODS[m[1].toLowerCase()];
  const unit = m[3] ? UNIT_HOURS[m[3].toLowerCase()] : undefined;
  return { kind, hours: m[2] && unit ? Number(m[2]) * unit : undefined };
}

/** The step between consecutive leads when it is one value throughout; undefined otherwise. */
export function regularStep(hours: number[]): number | undefined {
  if (hours.length < 2) return undefined;
  const step = hours[1] - hours[0];
  for (let i = 2; i < hours.length; i++) if (Math.abs(hours[i] - hours[i - 1] - step) > 1e-9) return undefined;
  return step > 0 ? step : undefined;
}

const WORDS: Record<Kind, string> = {
  instantaneous: "instantaneous",
  accumulated: "amount",
  mean: "mean",
  maximum: "maximum",
  minimum: "minimum",
};

/** Words for legends and popups: "amount over the previous 3 h", "mean over the previous step". */
export function temporalText(t: Temporal): string {
  if (t.kind === "instantaneous") return "instantaneous";
  const w = WORDS[t.kind];
  if (t.window === "since_start") return `${w} since the start of the forecast`;
  if (t.window === "previous_step") return `${w} over the previous step`;
  if (t.window === "since_reset") return `${w} since the last reset (every ${t.reset_hours} h from the run's start)`;
  if (t.window === "undecided") {
    return `${w} since the start of the forecast or since a periodic reset: undecided (${t.undecided_reason})`;
  }
  return `${w} over the previous ${fixedHours(t)} h`;
}

/**
 * The meaning of a variable in a group whose time steps are `steps` hours apart (the lead times,
 * or for an analysis without leads the spacing of its times).
 */
export function resolveTemporal(
  defaults: Temporal,
  attrs: Record<string, unknown>,
  steps: number[],
  analysis = false,
): ResolvedTemporal {
  let t: Temporal = defaults;
  let source = "registry";
  const stepType = [attrs.GRIB_stepType, attrs.step_type].find((v) => typeof v === "string") as string | undefined;
  const cell = typeof attrs.cell_methods === "string" ? fromCellMethods(attrs.cell_methods) : undefined;
  if (cell) {
    source = "cell_methods";
    if (cell.kind === "instantaneous") t = { kind: "instantaneous" };
    else if (cell.hours)
      t = { kind: cell.kind, window: "fixed", interval: `PT${cell.hours}H`, interval_hours: cell.hours };
    else if (defaults.kind !== "instantaneous" && defaults.kind === cell.kind) t = defaults;
    else t = { kind: cell.kind, window: "previous_step" };
  } else if (stepType && STEP_TYPES[stepType.toLowerCase()]) {
    const s = STEP_TYPES[stepType.toLowerCase()];
    source = attrs.GRIB_stepType === stepType ? "GRIB_stepType" : "step_type";
    if (s.kind === "instantaneous") t = { kind: "instantaneous" };
    // A fixed interval the registry knows (tp_6h) stays; otherwise the store's window holds.
    else if (defaults.kind === s.kind && defaults.window === "fixed") t = defaults;
    else t = { kind: s.kind, window: s.window! };
  }
  // An analysis has no run start to accumulate from: its amounts cover the time since the previous
  // stored time (ERA5's hourly precipitation), like a previous-step window.
  if (analysis && t.kind !== "instantaneous" && t.window === "since_start")
    t = { kind: t.kind, window: "previous_step" };
  // A previous-step window over a regular axis is a fixed interval of that step.
  if (t.kind !== "instantaneous" && t.window === "previous_step") {
    const step = regularStep(steps);
    if (step !== undefined) t = { kind: t.kind, window: "fixed", interval: `PT${step}H`, interval_hours: step };
  }
  return { ...t, source, description: temporalText(t) };
}

/** Greatest common divisor of lead hours (to a microhour). */
function gcdHours(a: number, b: number): number {
  let x = Math.round(a * 1e6);
  let y = Math.round(b * 1e6);
  while (y) [x, y] = [y, x % y];
  return x / 1e6;
}

/**
 * Reads what kind of accumulation a field is from its values over one run's leads. A since-start
 * amount never decreases from one lead to the next; a field that does drops only after leads
 * where its buckets reset, so the resets are every P hours with P the greatest common divisor of
 * those leads. `decreasesAfter` are the lead indexes i after which some value fell (at i + 1).
 * Undecided when the drops fit no such period (after lead 0, or a reset between stored leads).
 */
export function windowFromData(
  leads: number[],
  decreasesAfter: number[],
): { window: "since_start" } | { window: "since_reset"; hours: number } | { window: "undecided"; reason: string } {
  if (decreasesAfter.length === 0) return { window: "since_start" };
  const at = decreasesAfter.map((i) => leads[i]);
  if (at.some((h) => !(h > 0))) {
    return { window: "undecided", reason: "the amounts fall right after the run's start" };
  }
  const period = at.reduce(gcdHours);
  // Every reset must fall on a stored lead, else some value's interval is not known.
  for (let i = 1; i < leads.length; i++) {
    const k = Math.floor(leads[i - 1] / period + 1e-9) + 1;
    if (k * period < leads[i] - 1e-9) {
      return { window: "undecided", reason: `a reset every ${period} h falls between stored leads` };
    }
  }
  return { window: "since_reset", hours: period };
}

/** A since-start window made the one the data shows (see windowFromData). */
export function withDataWindow(t: ResolvedTemporal, found: ReturnType<typeof windowFromData>): ResolvedTemporal {
  if (t.kind === "instantaneous" || found.window === "since_start") return t;
  const next: Temporal =
    found.window === "since_reset"
      ? { kind: t.kind, window: "since_reset", reset: `PT${found.hours}H`, reset_hours: found.hours }
      : { kind: t.kind, window: "undecided", undecided_reason: found.reason };
  return { ...next, source: "data", description: temporalText(next) };
}

/**
 * The interval [start, end] (UTC ms) each lead's value covers; undefined for instantaneous values.
 * `leads` are hours after `run`; for an analysis without leads, `previousRun` bounds the window.
 */
export function leadIntervals(
  t: Temporal,
  run: number,
  leads: number[],
  previousRun?: number,
): { start: number; end: number }[] | undefined {
  if (t.kind === "instantaneous" || t.window === "undecided") return undefined;
  const H = 3_600_000;
  return leads.map((h, i) => {
    const end = run + h * H;
    if (t.window === "since_reset") {
      // The bucket holding lead h: (kP, (k+1)P], so a lead on a reset closes its bucket.
      const k = Math.max(0, Math.ceil(h / t.reset_hours - 1e-9) - 1);
      return { start: run + k * t.reset_hours * H, end };
    }
    // In a forecast nothing accumulates before the run; an analysis's window may reach back.
    if (t.window !== "since_start" && t.window !== "previous_step") {
      const start = end - (fixedHours(t) ?? 0) * H;
      return { start: previousRun === undefined ? Math.max(run, start) : start, end };
    }
    if (t.window === "since_start") {
      if (leads.length === 1 && h === 0 && previousRun !== undefined) return { start: previousRun, end };
      return { start: run, end };
    }
    if (i > 0) return { start: run + leads[i - 1] * H, end };
    if (h === 0 && previousRun !== undefined) return { start: previousRun, end };
    return { start: run, end };
  });
}
