// Label text in a real vector font for map tiles.
//
// The font is Noto Sans (SIL OFL), bundled by the @fontsource/noto-sans package: its Latin and
// Latin Extended subsets are handed to sharp's text input (Pango + FreeType), which rasterises a
// string into an anti-aliased 8-bit coverage mask. A light halo (the mask dilated by a disc,
// anti-aliased at its rim) keeps text readable over any colour ramp.
//
// API
//   labelMask(text, sizePx, { halo, weight })  → Promise<LabelMask>   (cached per text/size/options)
//   labelMasks(texts, sizePx, options)          → Promise<Map<text, LabelMask>>  (many at once)
//   cachedLabelMask(text, sizePx, options)      → LabelMask | undefined  (sync, after a labelMask call)
//   compositeLabel(rgba, width, height, mask, x0, y0, colours?)
//       draws the halo then the text, source-over, into a non-premultiplied RGBA buffer with
//       the mask's top-left at (x0, y0); any part outside the buffer is clipped, so a label placed
//       in world pixels can be drawn into every tile it overlaps and comes out identical in each.
//   LabelMask: { width, height, alpha, halo, pad }; alpha is text coverage (0..255), halo the
//   halo's coverage, both width*height row-major; `pad` pixels of margin around the text ink
//   hold the halo (the ink box is the mask less `pad` on each side).
//   Sizes are in CSS-like pixels (Pango "px" units at 72 dpi), so 12 px text is ~9 px cap height.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import sharp from "sharp";

export interface LabelOptions {
  /** Halo radius in pixels around the ink; 0 for none. Default 1.5. */
  halo?: number;
  /** Font weight: 400 regular, 500 medium, 600 semi-bold, 700 bold. Default 600. */
  weight?: 400 | 500 | 600 | 700;
  /** Italic (water names, by cartographic habit). Default false. */
  italic?: boolean;
}

export interface LabelMask {
  width: number;
  height: number;
  /** Text coverage, 0..255, width*height. */
  alpha: Uint8Array;
  /** Halo coverage, 0..255, width*height (all zero when the halo radius is 0). */
  halo: Uint8Array;
  /** Margin around the ink box on each side (room for the halo). */
  pad: number;
}

export interface LabelColours {
  /** Text colour and its opacity, [r, g, b, a]. */
  text?: [number, number, number, number];
  /** Halo colour and its opacity. */
  halo?: [number, number, number, number];
}

export const DEFAULT_TEXT: [number, number, number, number] = [20, 24, 30, 255];
export const DEFAULT_HALO: [number, number, number, number] = [255, 255, 255, 215];

const WEIGHT_NAMES: Record<number, string> = { 400: "", 500: " Medium", 600: " SemiBold", 700: " Bold" };

const fontDir = (() => {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("@fontsource/noto-sans/package.json")), "files");
})();

/** The font files of one weight/style: Latin first, Latin Extended for the rest of Europe's letters. */
function fontFiles(weight: number, italic: boolean): string[] {
  const style = italic ? "italic" : "normal";
  return ["latin", "latin-ext"].map((subset) => join(fontDir, `noto-sans-${subset}-${weight}-${style}.woff`));
}

const registered = new Set<string>();

/**
 * Pango finds a font file only once it has been named to fontconfig, which sharp does when the file
 * is given as `fontfile`; each file is named once (a one-character render), so every later render
 * can fall back from Latin to Latin Extended within Noto Sans instead of to a system font.
 */
async function register(files: string[]): Promise<void> {
  for (const file of files) {
    if (registered.has(file)) continue;
    await sharp({ text: { text: "x", font: "Noto Sans 8px", fontfile: file, dpi: 72 } })
      .raw()
      .toBuffer();
    registered.add(file);
  }
}

const escapeMarkup = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const cache = new Map<string, Promise<LabelMask>>();
const ready = new Map<string, LabelMask>();

const keyOf = (text: string, sizePx: number, o: LabelOptions): string =>
  `${sizePx}|${o.halo ?? 1.5}|${o.weight ?? 600}|${o.italic ? 1 : 0}|${text}`;

/** The cached mask of a label when labelMask has already made it, else undefined. */
export function cachedLabelMask(text: string, sizePx: number, options: LabelOptions = {}): LabelMask | undefined {
  return ready.get(keyOf(text, sizePx, options));
}

/** The anti-aliased mask of `text` at `sizePx`, with its halo; made once per text, size and options. */
export function labelMask(text: string, sizePx: number, options: LabelOptions = {}): Promise<LabelMask> {
  if (!(sizePx > 0 && sizePx <= 256)) throw new RangeError(`label size must be in (0, 256] px, got ${sizePx}`);
  const key = keyOf(text, sizePx, options);
  let made = cache.get(key);
  if (!made) {
    made = render(text, sizePx, options).then((mask) => {
      ready.set(key, mask);
      return mask;
    });
    cache.set(key, made);
  }
  return made;
}

/** Masks for many labels (distinct texts rendered once each). */
export async function labelMasks(
  texts: Iterable<string>,
  sizePx: number,
  options: LabelOptions = {},
): Promise<Map<string, LabelMask>> {
  const out = new Map<string, LabelMask>();
  for (const t of new Set(texts)) out.set(t, await labelMask(t, sizePx, options));
  return out;
}

async function render(text: string, sizePx: number, options: LabelOptions): Promise<LabelMask> {
  const weight = options.weight ?? 600;
  const italic = options.italic ?? false;
  const files = fontFiles(weight, italic);
  await register(files);
  const radius = Math.max(0, options.halo ?? 1.5);
  const pad = radius > 0 ? Math.ceil(radius) + 1 : 0;
  if (text.trim() === "") return emptyMask(pad);
  const font = `Noto Sans${WEIGHT_NAMES[weight]}${italic ? " Italic" : ""} ${sizePx}px`;
  const { data, info } = await sharp({
    text: { text: escapeMarkup(text), font, fontfile: files[0], dpi: 72 },
  })
    .extractChannel(0)
    .raw()
    .toBuffer({ resolveWithObject: true });
  const w = info.width + 2 * pad;
  const h = info.height + 2 * pad;
  const alpha = new Uint8Array(w * h);
  for (let y = 0; y < info.height; y++) {
    alpha.set(data.subarray(y * info.width, (y + 1) * info.width), (y + pad) * w + pad);
  }
  return { width: w, height: h, alpha, halo: radius > 0 ? dilate(alpha, w, h, radius) : new Uint8Array(w * h), pad };
}

function emptyMask(pad: number): LabelMask {
  const side = Math.max(1, 2 * pad);
  return { width: side, height: side, alpha: new Uint8Array(side * side), halo: new Uint8Array(side * side), pad };
}

/**
 * The halo: at each pixel, the largest ink coverage within `radius`, faded over the last pixel of
 * the disc so its rim is anti-aliased too.
 */
function dilate(alpha: Uint8Array, w: number, h: number, radius: number): Uint8Array {
  const reach = Math.ceil(radius + 0.5);
  const taps: [number, number, number][] = [];
  for (let dy = -reach; dy <= reach; dy++) {
    for (let dx = -reach; dx <= reach; dx++) {
      const weight = Math.min(1, Math.max(0, radius + 0.5 - Math.hypot(dx, dy)));
      if (weight > 0) taps.push([dx, dy, weight]);
    }
  }
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let best = 0;
      for (const [dx, dy, weight] of taps) {
        const xx = x + dx;
        const yy = y + dy;
        if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
        const v = alpha[yy * w + xx] * weight;
        if (v > best) best = v;
      }
      out[y * w + x] = Math.round(best);
    }
  }
  return out;
}

/** Source-over of colour (r, g, b) at opacity `a` (0..1) onto pixel `i` of a non-premultiplied RGBA buffer. */
export function blendPixel(rgba: Uint8Array, i: number, r: number, g: number, b: number, a: number): void {
  if (a <= 0) return;
  const da = rgba[i + 3] / 255;
  const oa = a + da * (1 - a);
  const k = da * (1 - a);
  rgba[i] = Math.round((r * a + rgba[i] * k) / oa);
  rgba[i + 1] = Math.round((g * a + rgba[i + 1] * k) / oa);
  rgba[i + 2] = Math.round((b * a + rgba[i + 2] * k) / oa);
  rgba[i + 3] = Math.round(oa * 255);
}

/**
 * Draws `mask` into `rgba` (width × height, 4 bytes per pixel, not premultiplied) with its top-left
 * corner at (x0, y0), halo first and text over it. Parts outside the buffer are clipped.
 */
export function compositeLabel(
  rgba: Uint8Array,
  width: number,
  height: number,
  mask: LabelMask,
  x0: number,
  y0: number,
  colours: LabelColours = {},
): void {
  const [tr, tg, tb, ta] = colours.text ?? DEFAULT_TEXT;
  const [hr, hg, hb, ha] = colours.halo ?? DEFAULT_HALO;
  const fromX = Math.max(0, -x0);
  const toX = Math.min(mask.width, width - x0);
  const fromY = Math.max(0, -y0);
  const toY = Math.min(mask.height, height - y0);
  for (let my = fromY; my < toY; my++) {
    for (let mx = fromX; mx < toX; mx++) {
      const m = my * mask.width + mx;
      const i = ((y0 + my) * width + x0 + mx) * 4;
      const h = mask.halo[m];
      if (h) blendPixel(rgba, i, hr, hg, hb, (h / 255) * (ha / 255));
      const t = mask.alpha[m];
      if (t) blendPixel(rgba, i, tr, tg, tb, (t / 255) * (ta / 255));
    }
  }
}
