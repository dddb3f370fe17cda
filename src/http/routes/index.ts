// Every route of the server, in one list: registration, validation and OpenAPI all read it.
import type { RouteDef } from "../route.ts";
import { dataRoutes } from "./data.ts";
import { docsRoutes } from "./docs.ts";
import { edrRoutes } from "./edr.ts";
import { embeddingRoutes } from "./embeddings.ts";
import { healthRoutes } from "./health.ts";
import { mapRoutes } from "./maps.ts";
import { stacRoutes } from "./stac.ts";
import { weatherRoutes } from "./weather.ts";

export function allRoutes(): RouteDef[] {
  const routes: RouteDef[] = [];
  const docs = docsRoutes(() => routes);
  routes.push(
    ...healthRoutes,
    ...docs,
    ...mapRoutes,
    ...weatherRoutes,
    ...dataRoutes,
    ...embeddingRoutes,
    ...stacRoutes,
    ...edrRoutes,
  );
  return routes;
}
