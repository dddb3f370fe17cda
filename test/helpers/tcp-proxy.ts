// A loopback TCP relay in front of PostgreSQL that a test can switch on late (a database that is
// unreachable at start-up) or freeze (a server that stops answering on open connections).
import { connect, createServer, type Server, type Socket } from "node:net";

export class TcpProxy {
  readonly port: number;
  #target: { host: string; port: number };
  #server: Server | null = null;
  #sockets = new Set<Socket>();
  #frozen = false;

  private constructor(port: number, target: { host: string; port: number }) {
    this.port = port;
    this.#target = target;
  }

  /** Reserves a free port and returns a relay that is not listening yet (connections refused). */
  static async reserve(target: { host: string; port: number }): Promise<TcpProxy> {
    const probe = createServer();
    await new Promise<void>((ok) => probe.listen(0, "127.0.0.1", () => ok()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((ok) => probe.close(() => ok()));
    return new TcpProxy(port, target);
  }

  async start(): Promise<void> {
    this.#server = createServer((client) => {
      const upstream = connect(this.#target.port, this.#target.host);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on("close", () => this.#sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      // Bytes are relayed only while not frozen; a frozen relay holds them, as a dead link would.
      const relay = (from: Socket, to: Socket) =>
        from.on("data", (d) => {
          if (this.#frozen) from.pause();
          to.write(d);
        });
      relay(client, upstream);
      relay(upstream, client);
      if (this.#frozen) {
        client.pause();
        upstream.pause();
      }
    });
    await new Promise<void>((ok) => this.#server!.listen(this.port, "127.0.0.1", () => ok()));
  }

  /** Stop relaying on every open connection (new ones connect but get no answers either). */
  freeze(): void {
    this.#frozen = true;
    for (const s of this.#sockets) s.pause();
  }

  thaw(): void {
    this.#frozen = false;
    for (const s of this.#sockets) s.resume();
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    if (this.#server) await new Promise<void>((ok) => this.#server!.close(() => ok()));
  }
}
