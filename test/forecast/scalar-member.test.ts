// One ensemble member saved alone, its member a scalar coordinate (the Met Office's `realization`,
// cfgrib's `number`), written as the producers leave it (scalar-member/write_stores.py): served,
// and every answer names the member it holds — never passed off as a deterministic run or the
// control. Values compared with xarray's.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

const WRITER = join(import.meta.dirname, "scalar-member", "write_stores.py");
const MEMBER: Record<string, number> = { mogreps: 12, cfgrib: 7 };

describe("a member saved alone, named by a scalar realization or number coordinate", () => {
  let dir: string;
  let xarray: Record<string, number[]>;
  const servers: Record<string, TestServer> = {};
  const keys: Record<string, string> = {};

  before(async () => {
    dir = tempDir("gridcast-scalar-member-");
    xarray = JSON.parse(execFileSync(PYTHON, [WRITER, dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
    for (const name of Object.keys(MEMBER)) {
      servers[name] = await testServer(join(dir, `${name}.zarr`));
      keys[name] = await servers[name].key(["weather"]);
    }
  });
  after(async () => {
    for (const s of Object.values(servers)) await s.close();
    cleanup(dir);
  });

  for (const [name, m] of Object.entries(MEMBER)) {
    test(`${name}: /point and the click answer xarray's values and say member ${m}; member=${m} is accepted, another is 400`, async () => {
      const H = { "X-API-Key": keys[name] };
      const base = `${servers[name].url}/point?lat=45&lon=5&var=t2m`;
      const r = await get(base, H);
      assert.equal(r.status, 200, r.body.toString());
      const p = r.json();
      assert.equal(p.member, m);
      assert.deepEqual(p.values, xarray[name]);
      const same = await get(`${base}&member=${m}`, H);
      assert.equal(same.status, 200, same.body.toString());
      assert.deepEqual(same.json().values, xarray[name]);
      const click = await get(`${servers[name].url}/api/forecast/value?layer=${name}.t2m&lat=45&lon=5&lead=3`);
      assert.equal(click.status, 200, click.body.toString());
      assert.deepEqual([click.json().member, click.json().value], [m, xarray[name][1]]);
      const other = await get(`${base}&member=0`, H);
      assert.equal(other.status, 400, other.body.toString());
      assert.match(other.json().detail, new RegExp(`holds only member ${m}`));
    });

    test(`${name}: the export header and the export listing name member ${m}`, async () => {
      const H = { "X-API-Key": keys[name] };
      const url =
        `${servers[name].url}/api/export/forecast~${name}/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2` +
        "&lat_min=44&lat_max=46&lon_min=4&lon_max=6";
      const r = await get(url, H);
      assert.equal(r.status, 200, r.body.toString());
      assert.equal(JSON.parse(r.headers.get("x-svc-field")!).member, m);
      const listing = (await get(`${servers[name].url}/api/export`, H)).json();
      assert.match(JSON.stringify(listing), new RegExp(`"member":${m}`));
    });
  }
});
