import { createSpecValidator } from '../spec-ajv.ts';
import type { OpenApiDocument, OperationEntry } from '../spec-catalog.ts';
import { escapeSegment, resolveRef } from './json-pointer.ts';

/** One way a response breaks its contract. `pointer` is a JSON pointer into the response body. */
export type ResponseViolation = { check: 'status' | 'content-type' | 'header' | 'body'; pointer: string; message: string };

export type ObservedResponse = {
  status: number;
  headers: Record<string, string | readonly string[] | undefined>;
  /** Parsed body for JSON media types, text otherwise, undefined when empty. */
  body: unknown;
};

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

const isJsonMediaType = (mediaType: string) => /^application\/([\w.+-]*\+)?json$/.test(mediaType);

export type ResponseCheckOptions = {
  /**
   * Also check the value of every declared header that is present against its schema (the
   * conformance suite). Off by default: the reference server's own checks stay as they were.
   */
  headerValues?: boolean;
  /** A validator the caller already compiled for this document (one ajv instance per spec). */
  validator?: ReturnType<typeof createSpecValidator>;
};

/**
 * Checks responses against one document: the status is declared (or a matching `4XX`/`default`),
 * the media type is declared, declared required headers are present and a JSON body validates
 * (every error listed). Compiles each schema once.
 */
export function createResponseChecker(document: OpenApiDocument, options: ResponseCheckOptions = {}) {
  const validator = options.validator ?? createSpecValidator(document);
  const resolve = (node: unknown) => resolveRef<Json>(document, node);

  return function checkResponse(operation: OperationEntry, response: ObservedResponse): ResponseViolation[] {
    const violations: ResponseViolation[] = [];
    const responses = (operation.operation.responses ?? {}) as Json;
    const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!statusKey) {
      return [{ check: 'status', pointer: '', message: `status ${response.status} is not declared for ${operation.operationId}` }];
    }
    const declared = resolve(responses[statusKey]) ?? {};
    const base = `/paths/${escapeSegment(operation.path)}/${operation.method}/responses/${escapeSegment(statusKey)}`;

    for (const [name, rawHeader] of Object.entries((declared.headers ?? {}) as Json)) {
      const header = resolve(rawHeader) ?? {};
      const value = response.headers[name.toLowerCase()];
      if (header.required && value === undefined) {
        violations.push({ check: 'header', pointer: '', message: `required header ${name} is missing` });
      } else if (options.headerValues && value !== undefined && header.schema) {
        const ref = responses[statusKey]?.$ref as string | undefined;
        const holder =
          typeof rawHeader?.$ref === 'string'
            ? (rawHeader.$ref as string).slice(1)
            : `${ref ? ref.slice(1) : base}/headers/${escapeSegment(name)}`;
        const fn = validator.at(`${holder}/schema`);
        const schema = resolve(header.schema) ?? {};
        for (const one of Array.isArray(value) ? value : [value]) {
          // Values are never echoed: a header may carry a session cookie or a token.
          if (!fn(headerValue(name, String(one), schema))) {
            violations.push({
              check: 'header',
              pointer: '',
              message: `header ${name} ${(fn.errors ?? []).map((e) => e.message).join(', ')}`,
            });
          }
        }
      }
    }

    const content = (declared.content ?? {}) as Json;
    const contentType = String(response.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const mediaTypes = Object.keys(content);
    if (mediaTypes.length === 0) {
      if (response.body !== undefined && response.body !== '') {
        violations.push({ check: 'body', pointer: '', message: `status ${response.status} declares no body but one was sent` });
      }
      return violations;
    }
    const mediaType =
      mediaTypes.find((m) => m.toLowerCase() === contentType) ??
      mediaTypes.find((m) => m.endsWith('/*') && contentType.startsWith(m.slice(0, -1)));
    if (!mediaType) {
      violations.push({
        check: 'content-type',
        pointer: '',
        message: `content type '${contentType}' is not one of ${mediaTypes.join(', ')}`,
      });
      return violations;
    }
    if (isJsonMediaType(mediaType) && content[mediaType]?.schema) {
      const ref = responses[statusKey]?.$ref as string | undefined;
      const responsePointer = ref ? ref.slice(1) : base;
      const fn = validator.at(`${responsePointer}/content/${escapeSegment(mediaType)}/schema`);
      if (!fn(response.body)) {
        for (const e of fn.errors ?? []) {
          const detail =
            e.keyword === 'additionalProperties'
              ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'`
              : e.keyword === 'enum'
                ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})`
                : '';
          violations.push({ check: 'body', pointer: e.instancePath, message: `${e.message}${detail}` });
        }
      }
    }
    return violations;
  };
}

export type ResponseChecker = ReturnType<typeof createResponseChecker>;

/** A header's text as its schema types it (numbers, booleans); Content-Type compared by media type only. */
function headerValue(name: string, text: string, schema: Json): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text.trim());
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  if (name.toLowerCase() === 'content-type') return text.split(';')[0]!.trim().toLowerCase();
  return text;
}
