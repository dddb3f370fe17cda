// The OGC API – EDR schemas as published (../shared/standards/ogcapi-edr/.../oas30/schemas), loaded
// into ajv at test time, each file under its own URL so their relative $refs resolve. Three of
// them cannot accept any valid document as published, and are corrected here, each by the least
// change that lets the standard's own examples through (say so in reports; nothing else is touched):
// - covjson/ndArray.yaml: `oneOf` over "values are numbers" and "shape and axisNames are given",
//   which every float NdArray with axes satisfies both of → `anyOf`;
// - covjson/domain.yaml: `axes` is `oneOf` a Grid branch and a trajectory branch whose composite
//   axis sits one level too deep (`axes.axes.composite`, required only there), so that branch
//   matches every object and every Grid domain matches both → the composite axis (and its optional
//   z) moved up to where the Grid branch's axes are, and required there;
// - covjson/referenceSystem.yaml: only temporal and identifier-based systems are allowed, so
//   CoverageJSON's GeographicCRS (type + id) matches no branch → a branch for it is added.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { parse } from "yaml";

export const EDR_STANDARD = resolve(import.meta.dirname, "../../../../shared/standards/ogcapi-edr/core/standard");
const SCHEMAS = join(EDR_STANDARD, "openapi/oas30/schemas");

export const CORRECTIONS = ["covjson/ndArray.yaml", "covjson/domain.yaml", "covjson/referenceSystem.yaml"];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".yaml") ? [p] : [];
  });
}

// biome-ignore lint/suspicious/noExplicitAny: schema documents are edited as plain data
function corrected(rel: string, s: any): any {
  if (rel === "covjson/ndArray.yaml") {
    s.anyOf = s.oneOf;
    delete s.oneOf;
  }
  if (rel === "covjson/domain.yaml") {
    const trajectory = s.properties.axes.oneOf[1];
    const nested = trajectory.properties.axes;
    trajectory.properties = nested.properties;
    trajectory.required = nested.required;
  }
  if (rel === "covjson/referenceSystem.yaml") {
    s.oneOf.push({
      description: "A geographic, projected or vertical CRS identified by URI (CoverageJSON 9.5)",
      properties: { type: { enum: ["GeographicCRS", "ProjectedCRS", "VerticalCRS"] }, id: { type: "string" } },
      not: { required: ["calendar"] },
    });
  }
  return s;
}

export function edrAjv(): { validate: (schema: string, doc: unknown) => string[] } {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const f of files(SCHEMAS)) {
    const rel = f.slice(SCHEMAS.length + 1);
    const s = corrected(rel, parse(readFileSync(f, "utf8")));
    ajv.addSchema({ ...s, $id: pathToFileURL(f).href });
  }
  return {
    validate(schema, doc) {
      const v = ajv.getSchema(pathToFileURL(join(SCHEMAS, schema)).href);
      if (!v) throw new Error(`no schema ${schema}`);
      return v(doc) ? [] : (v.errors ?? []).map((e) => `${e.instancePath} ${e.message} (${e.schemaPath})`);
    },
  };
}

/** The standard's parameter definitions (oas30/parameters/core), by file name. */
export function standardParameters(): Map<string, { name: string; in: string; style?: string; explode?: boolean }> {
  const dir = join(EDR_STANDARD, "openapi/oas30/parameters/core");
  return new Map(readdirSync(dir).map((f) => [f.replace(/\.yaml$/, ""), parse(readFileSync(join(dir, f), "utf8"))]));
}
