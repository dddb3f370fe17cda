// Test helper: decode a PNG with sharp (an independent decoder) to RGBA bytes.
import sharp from "sharp";

export interface Rgba {
  width: number;
  height: number;
  data: Buffer;
}

export async function decodeRgba(png: Buffer): Promise<Rgba> {
  const { data, info } = await sharp(png).raw().ensureAlpha().toBuffer({ resolveWithObject: true });
  assertChannels(info.channels);
  return { width: info.width, height: info.height, data };
}

function assertChannels(channels: number): void {
  if (channels !== 4) throw new Error(`expected RGBA from sharp, got ${channels} channels`);
}

/** RGBA of pixel i as an array, for readable assertion messages. */
export function pixel(data: Uint8Array, i: number): number[] {
  return [data[i * 4], data[i * 4 + 1], data[i * 4 + 2], data[i * 4 + 3]];
}
