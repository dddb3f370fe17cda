// The fully transparent 256 px tile: written once into every build (tiles/empty.png) and sent by
// the tile route wherever a layer has no data, so clients get an image rather than a 404.
import { encodeIndexedPng } from "./png.ts";
import { TILE_SIZE } from "./tiles.ts";

let cached: Buffer | undefined;

export function emptyTilePng(): Buffer {
  cached ??= encodeIndexedPng(new Uint8Array(TILE_SIZE * TILE_SIZE), TILE_SIZE, TILE_SIZE, new Uint8Array(4));
  return cached;
}
