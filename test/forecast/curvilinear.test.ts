// Curvilinear grids (2-D latitude/longitude, no projection stated) served from their nodes: a
// cfgrib-shaped store without its GRIB_* keys and one whose nodes are moved at random, compared
// with xarray (great-circle nearest over the stored nodes) and pyproj. The tests are in
// curvilinear/suite.ts, shared with projection-recovered.test.ts.
import { curvilinearSuite } from "./curvilinear/suite.ts";

curvilinearSuite("nodes");
