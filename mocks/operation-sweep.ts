import type { RoleName } from '../src/lib/roles.ts';
import { listOperations, loadSpec, type InterfaceName, type OpenApiDocument, type OperationEntry } from '../src/lib/spec-catalog.ts';
import { buildExampleRequest } from '../src/lib/contract/example-request.ts';
import { createResponseChecker } from '../src/lib/contract/response-check.ts';
import { resolveRef } from '../src/lib/contract/json-pointer.ts';
import { withExampleCredentials } from './example-credentials.ts';

/** One call of the sweep: which operation, on which role, asking for which media type, and what broke. */
export type SweepResult = {
  /** `<role> <operationId> <Accept sent>`: the key the deviation tables use. */
  key: string;
  status: number;
  contentType: string;
  /** `<check> <pointer>: <message>` per violation of the spec; [] when the answer conforms. */
  violations: string[];
};

/**
 * Calls every operation of the given specs once on every role that serves it (a request built from
 * the spec's examples, with stand-in credentials), plus once per further media type of its first
 * 2xx response (`Accept`), and checks each answer against the spec. `extraHeaders` go on every
 * request (e.g. Prism's `Prefer: dynamic=true`).
 */
export async function sweepOperations(
  interfaces: readonly InterfaceName[],
  urlOf: (role: RoleName) => string,
  extraHeaders: Record<string, string> = {},
): Promise<SweepResult[]> {
  const results: SweepResult[] = [];
  for (const name of interfaces) {
    const doc = loadSpec(name);
    const check = createResponseChecker(doc);
    for (const op of listOperations(doc)) {
      for (const role of op.roles as RoleName[]) {
        for (const accept of acceptVariants(doc, op)) {
          const request = await buildExampleRequest(doc, op);
          const headers = { ...withExampleCredentials(doc, op, request.headers), ...extraHeaders };
          if (accept !== '*/*') headers.accept = accept;
          const response = await fetch(`${urlOf(role)}${request.url}`, {
            method: request.method,
            headers,
            body: request.body ?? null,
            redirect: 'manual',
          });
          const text = await response.text();
          const contentType = response.headers.get('content-type') ?? '';
          const body = text === '' ? undefined : /json/.test(contentType) ? parseJson(text) : text;
          const violations = check(op, { status: response.status, headers: Object.fromEntries(response.headers), body });
          results.push({
            key: `${role} ${op.operationId} ${accept}`,
            status: response.status,
            contentType,
            violations: violations.map((v) => `${v.check} ${v.pointer}: ${v.message}`),
          });
        }
      }
    }
  }
  return results;
}

// First fetch's own `Accept: */*`, then each further media type of the lowest declared 2xx response.
function acceptVariants(doc: OpenApiDocument, op: OperationEntry): string[] {
  const responses = (op.operation.responses ?? {}) as Record<string, unknown>;
  const success = Object.keys(responses)
    .filter((s) => /^2\d\d$/.test(s))
    .sort()[0];
  const content = success ? (resolveRef<{ content?: Record<string, unknown> }>(doc, responses[success])?.content ?? {}) : {};
  return ['*/*', ...Object.keys(content).slice(1)];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
