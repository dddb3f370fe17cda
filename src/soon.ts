// A value now, or a promise of it later. The warm request path (a /point whose groups are known and
// whose chunk is decoded in the cache) has every answer in hand; making each step a promise would
// cost a microtask and an allocation per step for nothing. So a step that can answer at once
// returns its value, one that must wait returns a promise, and callers compose the two with then()
// below: one function per step, one path to read, and a warm request that finishes
// without a promise.
//
// Errors: a step that answers at once may also throw at once (where an async function would have
// rejected). Callers that need a rejection (a Promise.all of several, say) await inside an async
// function, where a throw becomes one; the HTTP layer already treats both alike.

export type Soon<T> = T | Promise<T>;

/** Whether the answer is still to come. */
export function isPending<T>(v: Soon<T>): v is Promise<T> {
  return v instanceof Promise;
}

/** f of the value: at once when the value is in hand, else when it arrives. */
export function then<T, U>(v: Soon<T>, f: (x: T) => Soon<U>): Soon<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}
