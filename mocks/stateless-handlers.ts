import { HttpHandler } from 'msw';
import type { RoleName } from '../src/lib/roles.ts';
import { listOperations, loadSpec, type InterfaceName } from '../src/lib/spec-catalog.ts';
import { createRouteTable } from '../src/server/route-table.ts';
import { baseUrlFor, pathBelow } from './base-url.ts';
import { chooseAnswer, parsePrefer, type ChosenAnswer, type ExampleChoice } from './example-selection.ts';

export type StatelessHandlerOptions = {
  /**
   * Where the operations are reached: one URL for every operation of the spec (your SDK client's
   * `baseUrl`), or one per role; by default each role's spec server URL (`http://localhost:8081`, ...).
   */
  baseUrl?: string | Partial<Record<RoleName, string>>;
  /** A fixed answer per operationId (status and/or example name); a request's `Prefer` header wins. */
  answers?: Readonly<Record<string, ExampleChoice>>;
};

/**
 * MSW handlers answering every operation of one spec from its named examples, with the declared
 * response headers. Per request, `Prefer: code=<status>` and/or `Prefer: example=<name>` pick another
 * declared answer (as Prism does), and `Accept` picks among declared media types. Asking for an answer
 * the spec does not declare throws, which MSW turns into a 500 naming what the spec offers.
 * Requests are not validated: use `createStatefulHandlers` for the reference server's checks.
 *
 * @example
 * const server = setupServer(...createStatelessHandlers('mapping', { baseUrl: 'http://localhost:8081' }));
 * server.listen({ onUnhandledFrame: 'error' });
 */
export function createStatelessHandlers(interfaceName: InterfaceName, options: StatelessHandlerOptions = {}): HttpHandler[] {
  const doc = loadSpec(interfaceName);
  const operations = listOperations(doc);
  const unknown = Object.keys(options.answers ?? {}).filter((id) => !operations.some((op) => op.operationId === id));
  if (unknown.length > 0) throw new Error(`createStatelessHandlers('${interfaceName}'): no operation ${unknown.join(', ')} in the spec.`);
  const routes = createRouteTable(operations);
  return operations.map((op) => {
    const baseUrls = [...new Set((op.roles as RoleName[]).map((role) => baseUrlFor(options.baseUrl, role)))];
    return new HttpHandler(
      op.method.toUpperCase(),
      ({ request }) => {
        for (const baseUrl of baseUrls) {
          const below = pathBelow(baseUrl, request.url);
          const match = below && routes.find(request.method, below.path);
          if (match?.operation === op) return { matches: true, params: match.params };
        }
        return false;
      },
      ({ request }) => {
        const fromHeader = parsePrefer(request.headers.get('prefer'));
        const choice = Object.keys(fromHeader).length > 0 ? fromHeader : (options.answers?.[op.operationId] ?? {});
        const answer = chooseAnswer(doc, op, choice, request.headers.get('accept'));
        if ('error' in answer) throw new Error(`Portolan mock (${interfaceName}): ${answer.error}`);
        return toResponse(answer);
      },
    );
  });
}

const isJson = (mediaType: string) => /^application\/([\w.+-]*\+)?json$/i.test(mediaType);

function toResponse(answer: ChosenAnswer): Response {
  const headers = new Headers(answer.headers);
  if (answer.mediaType === undefined || answer.body === undefined) return new Response(null, { status: answer.status, headers });
  headers.set('content-type', answer.mediaType);
  const text = typeof answer.body === 'string' && !isJson(answer.mediaType) ? answer.body : JSON.stringify(answer.body);
  return new Response(text, { status: answer.status, headers });
}
