// Plaintext key format, hashing and the checks authenticate() runs on a looked-up key.
// Shared by both ledger implementations so they accept and reject exactly the same keys.
import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import { ForbiddenError, UnauthorizedError } from "../errors.ts";
import type { KeyLookup, KeyRecord, Scope } from "./types.ts";

const PREFIX = "gck_";
// Key id: 12 hex chars (no "_" so the key splits unambiguously); secret: 32 bytes base64url.
const KEY_RE = /^gck_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

const NO_HASH = Buffer.alloc(32);

export function newKeyId(): string {
  return randomBytes(6).toString("hex");
}

/** A fresh plaintext key for a key id: gck_<id>_<secret>. */
export function mintKey(id: string): string {
  return `${PREFIX}${id}_${randomBytes(32).toString("base64url")}`;
}

// A plain SHA-256 is enough here: the secret carries 256 random bits, so there is no dictionary
// to try and brute force is hopeless; slow password hashes (scrypt, argon2) defend low-entropy
// passwords and would only burn CPU on every request. Hashing the whole key binds id and secret.
// The one-shot hash() skips the Hash object createHash() builds: it runs on every keyed request.
export function hashKey(plaintext: string): Buffer {
  return hash("sha256", plaintext, "buffer");
}

// The digest of a presented key goes into one reused buffer. hash() asked for a Buffer returns
// one with its own memory outside the JavaScript heap: about 2 µs per call on the keyed path,
// several times the hash itself. The binary string form is the same 32 bytes, copied here and
// compared at once (nothing runs in between, so one buffer serves every request).
const PRESENTED = Buffer.alloc(32);

function presentedDigest(plaintext: string): Buffer {
  const written = PRESENTED.write(hash("sha256", plaintext, "binary"), 0, "latin1");
  if (written !== PRESENTED.length) throw new Error(`a SHA-256 digest of ${written} bytes`);
  return PRESENTED;
}

/** The key id of a well-formed key, or null. */
export function parseKeyId(plaintext: string | null | undefined): string | null {
  if (typeof plaintext !== "string") return null;
  return KEY_RE.exec(plaintext)?.[1] ?? null;
}

/**
 * Decides whether a presented key opens `found`: hash match in constant time, then revocation,
 * expiry and scope. The caller has already found the record by the key's id (null: unknown).
 */
export function admit(plaintext: string, found: KeyLookup | null, requiredScope: Scope, now = Date.now()): KeyRecord {
  const presented = presentedDigest(plaintext);
  // An unknown id runs the same hash and the same 32-byte comparison against a dummy, so a wrong
  // secret for a known id and an unknown id cost the same work (the key cache makes the lookup
  // before this equal too: both are a Map hit once the id has been seen).
  const stored = found !== null && found.hash.length === NO_HASH.length ? found.hash : NO_HASH;
  const match = timingSafeEqual(stored, presented);
  if (found === null || !match) throw new UnauthorizedError("invalid API key");
  const { record } = found;
  if (record.revokedAt !== null) throw new UnauthorizedError("API key has been revoked");
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) {
    throw new UnauthorizedError("API key has expired");
  }
  if (!record.scopes.includes(requiredScope)) {
    throw new ForbiddenError(`API key lacks the "${requiredScope}" scope`, { required_scope: requiredScope });
  }
  return record;
}

/** authenticate() for any ledger: parse the id, look it up, admit. */
export async function authenticateWith(
  lookup: (id: string) => Promise<KeyLookup | null>,
  plaintext: string | null | undefined,
  requiredScope: Scope,
): Promise<KeyRecord> {
  const id = parseKeyId(plaintext);
  if (id === null) throw malformed(plaintext);
  return admit(plaintext as string, await lookup(id), requiredScope);
}

export function malformed(plaintext: string | null | undefined): UnauthorizedError {
  return new UnauthorizedError(
    plaintext ? "malformed API key: expected gck_<id>_<secret>" : "missing API key: send the X-API-Key header",
  );
}
