// File output of the tile workers: synchronous (each worker is its own thread), directories made
// once, and hard links for repeated tiles. A file system caps the links of one inode (ext4: 65,000);
// past the cap the tile is copied once and later links point at the copy.
import { copyFileSync, linkSync, mkdirSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

export class TileWriter {
  #dirs = new Set<string>();
  /** Link source (by inode) → a fresh copy to link instead, once the source hit the link cap. */
  #replacement = new Map<string, string>();

  ensureDir(dir: string): void {
    if (this.#dirs.has(dir)) return;
    mkdirSync(dir, { recursive: true });
    this.#dirs.add(dir);
  }

  /**
   * A new file at `path`. Never written through an existing file: that one may be a hard link into
   * the published build (left by an interrupted attempt), which must not change.
   */
  write(path: string, bytes: Uint8Array): void {
    try {
      writeFileSync(path, bytes, { flag: "wx" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      unlinkSync(path);
      writeFileSync(path, bytes, { flag: "wx" });
    }
  }

  /** Hard-link `src` to `dst`, replacing a file left at `dst` by an earlier, interrupted attempt. */
  link(src: string, dst: string, retried = false): void {
    try {
      linkSync(src, dst);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST" && !retried) {
        unlinkSync(dst);
        this.link(src, dst, true);
      } else if (code === "EMLINK") {
        this.#linkPastCap(src, dst);
      } else {
        throw e;
      }
    }
  }

  #linkPastCap(src: string, dst: string): void {
    const s = statSync(src);
    const key = `${s.dev}:${s.ino}`;
    const copy = this.#replacement.get(key);
    if (copy) {
      try {
        linkSync(copy, dst);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EMLINK") throw e;
      }
    }
    copyFileSync(src, dst);
    this.#replacement.set(key, dst);
  }

  removeTree(dir: string): void {
    rmSync(dir, { recursive: true, force: true });
    for (const d of this.#dirs) if (d === dir || d.startsWith(`${dir}/`)) this.#dirs.delete(d);
  }

  /** Hard-link every file below `srcDir` to the same place below `dstDir`; undefined if `srcDir` is gone. */
  linkTree(srcDir: string, dstDir: string): number | undefined {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(srcDir, { recursive: true, withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
    let files = 0;
    for (const ent of entries) {
      if (!ent.isFile()) continue;
      const src = join(ent.parentPath, ent.name);
      const dst = join(dstDir, relative(srcDir, src));
      this.ensureDir(dirname(dst));
      this.link(src, dst);
      files++;
    }
    return files;
  }
}
