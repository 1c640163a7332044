/**
 * The web UI's JavaScript and CSS, built from `web/` with esbuild on first use (in memory, once per
 * process): nothing is committed that could fall behind its sources, and an installed package needs
 * no separate build step. The bundle is small and builds in well under a second.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { PROJECT_ROOT } from '../../shared/project-root';

/** Where the browser code lives. */
export const WEB_SOURCE_DIR = path.join(PROJECT_ROOT, 'web');

/** The JavaScript budget of a page: what a browser downloads, gzip-compressed. */
export const MAX_PAGE_JS_GZIP_BYTES = 100 * 1024;

/** One built file. */
export interface WebAsset {
  /** File name under `/assets/`. */
  name: string;
  contentType: string;
  body: Uint8Array;
  /** Short content hash, used as a cache-busting query (`?v=…`). */
  version: string;
  /** Size as sent with gzip. */
  gzipBytes: number;
}

/** The built files and how long the build took. */
export interface WebAssets {
  js: WebAsset;
  css: WebAsset;
  buildMs: number;
}

function asset(name: string, contentType: string, body: Uint8Array): WebAsset {
  return {
    name,
    contentType,
    body,
    version: createHash('sha256').update(body).digest('hex').slice(0, 12),
    gzipBytes: gzipSync(body, { level: 9 }).length,
  };
}

/** Builds the bundle (minified, no source map: the page loads one script and one stylesheet). */
export async function buildWebAssets(): Promise<WebAssets> {
  // Loaded here, not at the top: the API without the web UI never pays for esbuild.
  const esbuild = await import('esbuild');
  const started = performance.now();
  const result = await esbuild.build({
    entryPoints: [path.join(WEB_SOURCE_DIR, 'app.ts'), path.join(WEB_SOURCE_DIR, 'style.css')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    platform: 'browser',
    write: false,
    outdir: 'out',
    logLevel: 'silent',
    absWorkingDir: PROJECT_ROOT,
    legalComments: 'none',
  });
  const file = (ext: string) => {
    const out = result.outputFiles.find((f) => f.path.endsWith(ext));
    if (!out) throw new Error(`The web UI build made no ${ext} file`);
    return out.contents;
  };
  return {
    js: asset('app.js', 'text/javascript; charset=utf-8', file('.js')),
    css: asset('app.css', 'text/css; charset=utf-8', file('.css')),
    buildMs: performance.now() - started,
  };
}

/** One line for people: what a page weighs, against the budget. */
export function describeWeight(assets: WebAssets): string {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  return (
    `web UI built in ${Math.round(assets.buildMs)} ms: JavaScript ${kb(assets.js.gzipBytes)} gzip ` +
    `(${kb(assets.js.body.length)} minified; budget ${kb(MAX_PAGE_JS_GZIP_BYTES)}), CSS ${kb(assets.css.gzipBytes)} gzip`
  );
}

let cached: Promise<WebAssets> | undefined;

/** The assets of this process, built on first call; a failed build is retried on the next call. */
export function webAssets(): Promise<WebAssets> {
  if (!cached) {
    cached = buildWebAssets();
    cached.catch(() => {
      cached = undefined;
    });
  }
  return cached;
}
