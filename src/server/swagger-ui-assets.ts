// The Swagger UI files the reference pages serve, from the installed swagger-ui-dist package (never a CDN):
// a fixed allow-list of file names, each read from disk once per process, on first request, and kept with
// its ETag and gzipped form (compressed off the event loop) in one cache every role shares. A name outside
// the list is unknown, so no request can reach another file.
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { asyncGzip, compressedRepresentation, representation, type Gzip, type Representation } from './reference-representation.ts';

// Resolved through the module system, so it also works when Portolan is installed as a package.
const PACKAGE_JSON = createRequire(import.meta.url).resolve('swagger-ui-dist/package.json');
const ASSET_DIR = dirname(PACKAGE_JSON);

/** The installed Swagger UI version (it versions the asset URLs, so they can be cached for good). */
export const SWAGGER_UI_VERSION: string = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const MAP = 'application/json; charset=utf-8';
const PNG = 'image/png';

/** The files a page needs (and the source maps a browser's developer tools ask for), with their types. */
export const SWAGGER_UI_FILES: Readonly<Record<string, string>> = Object.freeze({
  'swagger-ui.css': CSS,
  'swagger-ui.css.map': MAP,
  'index.css': CSS,
  'swagger-ui-bundle.js': JS,
  'swagger-ui-bundle.js.map': MAP,
  'swagger-ui-standalone-preset.js': JS,
  'swagger-ui-standalone-preset.js.map': MAP,
  'favicon-16x16.png': PNG,
  'favicon-32x32.png': PNG,
});

/** The asset URLs are versioned (`?v=`), so a browser keeps them until Swagger UI is upgraded. */
const CACHE_FOREVER = 'public, max-age=31536000, immutable';

export type SwaggerUiAssets = {
  /** The file's representation, or undefined when `name` is not on the list. */
  get(name: string): Promise<Representation> | undefined;
  /** How many files were read from disk and how many were gzipped so far (tests check the cache with it). */
  stats(): { reads: number; compressions: number };
};

export type SwaggerUiAssetsOptions = {
  /** Where the files are (default: the installed swagger-ui-dist). */
  dir?: string;
  /** How they are compressed (default: zlib's asynchronous gzip; tests pass their own). */
  gzip?: Gzip;
};

/**
 * The allow-listed Swagger UI files, each read and compressed once: concurrent first requests share the
 * one read and compression in flight; a failed one is retried on the next request.
 */
export function createSwaggerUiAssets(options: SwaggerUiAssetsOptions = {}): SwaggerUiAssets {
  const dir = options.dir ?? ASSET_DIR;
  const gzip = options.gzip ?? asyncGzip;
  const loaded = new Map<string, Promise<Representation>>();
  const counts = { reads: 0, compressions: 0 };
  const countedGzip: Gzip = (bytes) => {
    counts.compressions++;
    return gzip(bytes);
  };
  const load = async (name: string, contentType: string): Promise<Representation> => {
    counts.reads++;
    const bytes = await readFile(join(dir, name));
    // PNG is compressed already.
    return contentType === PNG
      ? representation(bytes, contentType, CACHE_FOREVER)
      : compressedRepresentation(bytes, contentType, CACHE_FOREVER, countedGzip);
  };
  return {
    get(name) {
      if (!Object.hasOwn(SWAGGER_UI_FILES, name)) return undefined;
      let asset = loaded.get(name);
      if (!asset) {
        asset = load(name, SWAGGER_UI_FILES[name]!);
        loaded.set(name, asset);
        asset.catch(() => loaded.delete(name));
      }
      return asset;
    },
    stats: () => ({ ...counts }),
  };
}

let shared: SwaggerUiAssets | undefined;

/**
 * The process's one cache of the installed Swagger UI files, shared by every role: each file is read and
 * compressed once per process, not once per role, and held in memory once.
 */
export function sharedSwaggerUiAssets(): SwaggerUiAssets {
  return (shared ??= createSwaggerUiAssets());
}
