// The floor Node itself sets for a public file: a bare node:http server holding one file's bytes
// and answering every request with them and a fixed header set (the one gridcast's lean path sent
// for that file, passed in as JSON), with no routing, logging or checks. bench/public-tail.ts runs
// it beside gridcast and nginx, so a tail can be read against Node's own as well as nginx's.
//   node bench/bare-file-server.ts FILE PORT HEADERS_JSON
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const [file, port, headersJson] = process.argv.slice(2);
const body = readFileSync(file);
const heads: string[] = [];
for (const [k, v] of Object.entries(JSON.parse(headersJson) as Record<string, string>)) heads.push(k, v);
createServer((req, res) => {
  res.writeHead(200, heads);
  res.end(req.method === "HEAD" ? undefined : body);
}).listen(Number(port), "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
