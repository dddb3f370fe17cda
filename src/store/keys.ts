// Store keys are confined to the store root. A key is a "/"-separated relative path whose
// segments are plain names: no "..", no ".", no empty segment, no backslash, no NUL, no
// leading "/" once the zarrita-style leading slash is stripped. Anything else is rejected
// before it can reach a filesystem or an upstream URL.
import { NotFoundError } from "../errors.ts";

const BAD_SEGMENT = /[\\\0]|^\.{1,2}$|^$/;

/** Normalise an absolute zarrita key ("/a/b") or relative key ("a/b"); throws on escape attempts. */
export function confineKey(key: string): string {
  const rel = key.startsWith("/") ? key.slice(1) : key;
  if (rel === "") return "";
  if (rel.startsWith("/") || /^[a-zA-Z]:/.test(rel)) throw new NotFoundError("no such key");
  for (const seg of rel.split("/")) {
    if (BAD_SEGMENT.test(seg)) throw new NotFoundError("no such key");
  }
  return rel;
}

/** True when `key` is a safe relative key (see confineKey). */
export function isConfinedKey(key: string): boolean {
  try {
    confineKey(key);
    return true;
  } catch {
    return false;
  }
}
