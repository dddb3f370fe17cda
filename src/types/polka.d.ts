// Minimal typing of polka 0.5 as gridcast uses it.
declare module "polka" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  type Next = (err?: unknown) => void;
  // biome-ignore lint/suspicious/noExplicitAny: polka adds params, query and path to the request
  type Fn = (req: IncomingMessage & Record<string, any>, res: ServerResponse, next: Next) => void;
  interface Polka {
    use(...fns: Fn[]): Polka;
    get(pattern: string, ...fns: Fn[]): Polka;
    head(pattern: string, ...fns: Fn[]): Polka;
    post(pattern: string, ...fns: Fn[]): Polka;
    handler: (req: IncomingMessage, res: ServerResponse) => void;
    routes: Record<string, unknown[]>;
  }
  function polka(opts?: {
    onError?: (err: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void;
    onNoMatch?: (req: IncomingMessage, res: ServerResponse) => void;
  }): Polka;
  export default polka;
}
