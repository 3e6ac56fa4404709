// The Swagger UI files the reference pages serve, from the installed swagger-ui-dist package (never a CDN):
// a fixed allow-list of file names, each read from disk once, on first request, and kept with its ETag and
// gzipped form. A name outside the list is unknown, so no request can reach another file.
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { representation, type Representation } from './reference-representation.ts';

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
};

/** The allow-listed Swagger UI files, each read once; a failed read is retried on the next request. */
export function createSwaggerUiAssets(dir: string = ASSET_DIR): SwaggerUiAssets {
  const loaded = new Map<string, Promise<Representation>>();
  return {
    get(name) {
      if (!Object.hasOwn(SWAGGER_UI_FILES, name)) return undefined;
      let asset = loaded.get(name);
      if (!asset) {
        const contentType = SWAGGER_UI_FILES[name]!;
        asset = readFile(join(dir, name)).then((bytes) => representation(bytes, contentType, CACHE_FOREVER, contentType !== PNG));
        loaded.set(name, asset);
        asset.catch(() => loaded.delete(name));
      }
      return asset;
    },
  };
}
