// Minimal typing of topojson-client 3 as gridcast uses it: mesh() of a geometry collection.
declare module "topojson-client" {
  export interface TopoGeometry {
    type: string;
    properties?: Record<string, unknown>;
  }
  export interface Topology {
    type: "Topology";
    objects: Record<string, { type: "GeometryCollection"; geometries: TopoGeometry[] }>;
  }
  export function mesh(
    topology: Topology,
    object?: Topology["objects"][string],
    filter?: (a: TopoGeometry, b: TopoGeometry) => boolean,
  ): { type: "MultiLineString"; coordinates: [number, number][][] };
}
