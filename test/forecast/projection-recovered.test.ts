// Grids stored with 2-D latitude/longitude and no x/y values whose projection the producer stated
// (cfgrib's GRIB_* keys, Herbie's CF grid mapping, kerchunk-combined HRRR, raw WRF's MAP_PROJ
// globals): recovered, checked against the nodes and served as projected grids, compared with
// xarray + pyproj. The tests are in curvilinear/suite.ts, shared with curvilinear.test.ts.
import { curvilinearSuite } from "./curvilinear/suite.ts";

curvilinearSuite("recovered");
