// Sequential reads with one read ahead: while the consumer handles part i (sends it), part i+1
// is already being read, so store reads and decoding overlap with sending. At most two parts are
// held at once.

/** Yields read(parts[0]), read(parts[1]), … in order, starting each read one part early. */
export async function* readAhead<P, T>(parts: P[], read: (part: P) => Promise<T>): AsyncGenerator<T> {
  const start = (i: number) => {
    const p = read(parts[i]);
    // Observed here so that a read left behind by a consumer that stopped (a client that went
    // away) is not an unhandled rejection; whoever awaits it still sees the error.
    p.catch(() => {});
    return p;
  };
  if (parts.length === 0) return;
  let next = start(0);
  for (let i = 0; i < parts.length; i++) {
    const part = await next;
    if (i + 1 < parts.length) next = start(i + 1);
    yield part;
  }
}
