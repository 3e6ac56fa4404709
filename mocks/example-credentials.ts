import type { OpenApiDocument, OperationEntry } from '../src/lib/spec-catalog.ts';
import { resolveRef } from '../src/lib/contract/json-pointer.ts';

type SecurityScheme = { type?: string; scheme?: string; in?: string; name?: string };

/**
 * Stand-in credentials for an operation's first security requirement (Basic, Bearer, an API-key
 * header or cookie), merged into example request headers. Mocks check only that they are present.
 */
export function withExampleCredentials(doc: OpenApiDocument, op: OperationEntry, headers: Record<string, string>): Record<string, string> {
  const requirements = (op.operation.security ?? (doc as { security?: unknown }).security ?? []) as Record<string, string[]>[];
  const first = requirements[0] ?? {};
  const out = { ...headers };
  for (const name of Object.keys(first)) {
    const scheme = resolveRef<SecurityScheme>(doc, doc.components?.securitySchemes?.[name]) ?? {};
    if (scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'basic')
      out.authorization = `Basic ${Buffer.from('admin:example-password').toString('base64')}`;
    else if (scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer') out.authorization = 'Bearer example-token';
    else if (scheme.type === 'apiKey' && scheme.in === 'header' && scheme.name) out[scheme.name.toLowerCase()] = 'example-token';
    else if (scheme.type === 'apiKey' && scheme.in === 'cookie' && scheme.name)
      out.cookie = `${out.cookie ? `${out.cookie}; ` : ''}${scheme.name}=example-session`;
  }
  return out;
}
