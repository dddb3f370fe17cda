// Ledger errors crossing a thread boundary: structured clone keeps only plain data, so a typed
// error travels as {name, message, extensions} and is rebuilt as the same class on arrival.
import * as errors from "../errors.ts";
import { unavailable } from "./guard.ts";

export interface WireError {
  name: string;
  message: string;
  extensions: errors.Extensions;
}

export function toWire(e: unknown): WireError {
  // Anything untyped is a database failure: the caller sees only "ledger unavailable".
  const err = e instanceof errors.GridcastError ? e : unavailable(e);
  return { name: err.name, message: err.message, extensions: err.extensions };
}

const CLASSES: Record<string, new (...args: never[]) => errors.GridcastError> = {
  ForbiddenError: errors.ForbiddenError,
  InsufficientCreditsError: errors.InsufficientCreditsError,
  InvalidParameterError: errors.InvalidParameterError,
  LedgerUnavailableError: errors.LedgerUnavailableError,
  NotFoundError: errors.NotFoundError,
  UnauthorizedError: errors.UnauthorizedError,
};

export function fromWire(w: WireError): errors.GridcastError {
  // Runs GridcastError's constructor with the subclass as new.target: same prototype and name,
  // whatever arguments the subclass's own constructor takes.
  const cls = CLASSES[w.name] ?? errors.LedgerUnavailableError;
  return Reflect.construct(errors.GridcastError, [w.message, w.extensions], cls);
}
