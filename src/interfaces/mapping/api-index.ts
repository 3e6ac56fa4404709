import type { ApiIndex } from '../../../generated/mapping/types.gen.ts';
import { HTTP_METHODS, type OpenApiDocument } from '../../lib/spec-catalog.ts';

export const API_TITLE = "Captain Cook's Newfoundland Mapping API";
export const API_DESCRIPTION =
  'An API for the charts, vessels, hazards, journal and resources of the 1760s survey of the coast of Newfoundland.';

/** `{chartId}` -> `<chart_id>`: the placeholder style the real API advertises. */
const placeholder = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_m, name: string) => `<${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}>`);

/**
 * The root document, derived from the spec so the advertised list can never drift from what is
 * served: every path but `/` with its methods and its path-level summary.
 */
export function buildApiIndex(doc: OpenApiDocument): ApiIndex {
  const available_endpoints = Object.entries(doc.paths)
    .filter(([path]) => path !== '/')
    .map(([path, item]) => ({
      path: placeholder(path),
      methods: HTTP_METHODS.filter((m) => item[m]).map((m) => m.toUpperCase()),
      description: String(item.summary ?? ''),
    }));
  return { title: API_TITLE, description: API_DESCRIPTION, available_endpoints };
}
