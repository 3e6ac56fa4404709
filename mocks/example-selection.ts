import type { OpenApiDocument, OperationEntry } from '../src/lib/spec-catalog.ts';
import { exampleValue } from '../src/lib/contract/example-request.ts';
import { isObject, resolveRef } from '../src/lib/contract/json-pointer.ts';

/** Which declared answer to give: a status, a named example, or both (unset: the first 2xx, its first example). */
export type ExampleChoice = { status?: number; example?: string };

/** A declared answer, ready to send. */
export type ChosenAnswer = { status: number; mediaType?: string; body?: unknown; headers: Record<string, string> };

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

/**
 * Reads Prism's `Prefer` header (`Prefer: code=404`, `Prefer: example=notFound`, or both, comma or
 * semicolon separated). Other preferences are ignored.
 */
export function parsePrefer(header: string | null): ExampleChoice {
  const choice: ExampleChoice = {};
  for (const part of (header ?? '').split(/[,;]/)) {
    const [key, ...rest] = part.trim().split('=');
    const value = rest
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (key === 'code' && /^\d{3}$/.test(value)) choice.status = Number(value);
    if (key === 'example' && value) choice.example = value;
  }
  return choice;
}

/**
 * Picks an operation's declared answer from its spec: the chosen status (else the lowest 2xx, else the
 * lowest declared), the media type the `Accept` header prefers among the declared ones (else the first),
 * and the chosen named example (else the first). An example chosen without a status is looked up in
 * the 2xx answers first, then the others. Declared response headers get their example values.
 * A choice the spec cannot satisfy is a mistake in the test, so it comes back as a message.
 */
export function chooseAnswer(
  doc: OpenApiDocument,
  op: OperationEntry,
  choice: ExampleChoice,
  accept: string | null,
): ChosenAnswer | { error: string } {
  const responses = (op.operation.responses ?? {}) as Json;
  const declared = Object.keys(responses)
    .filter((s) => /^\d{3}$/.test(s))
    .map(Number)
    .sort((a, b) => a - b);
  const ordered = [...declared.filter((s) => s >= 200 && s < 300), ...declared.filter((s) => s < 200 || s >= 300)];
  let statuses: number[];
  if (choice.status !== undefined) {
    if (!declared.includes(choice.status))
      return { error: `${op.operationId} declares no ${choice.status} answer; it declares ${declared.join(', ')}.` };
    statuses = [choice.status];
  } else {
    statuses = choice.example === undefined ? ordered.slice(0, 1) : ordered;
  }
  for (const status of statuses) {
    const response = resolveRef<Json>(doc, responses[String(status)]) ?? {};
    const content = (response.content ?? {}) as Json;
    const mediaTypes = preferredOrder(Object.keys(content), accept);
    if (mediaTypes.length === 0) {
      if (choice.example !== undefined) continue;
      return { status, headers: declaredHeaders(doc, response) };
    }
    for (const mediaType of mediaTypes) {
      const media = content[mediaType] as Json;
      const examples = isObject(media.examples) ? media.examples : {};
      const name = choice.example ?? Object.keys(examples)[0];
      if (name !== undefined && !(name in examples)) continue;
      const body = name === undefined ? exampleValue(doc, media) : resolveRef<Json>(doc, examples[name])?.value;
      return { status, mediaType, body, headers: declaredHeaders(doc, response) };
    }
  }
  const where = choice.status !== undefined ? `its ${choice.status} answer` : 'any answer';
  return {
    error: `${op.operationId} has no example named '${choice.example}' in ${where}; it has ${listExamples(doc, responses).join(', ') || 'none'}.`,
  };
}

/** Declared media types, those the Accept header asks for first (in its order, q=0 excluded). */
function preferredOrder(mediaTypes: string[], accept: string | null): string[] {
  if (!accept) return mediaTypes;
  const wanted = accept
    .split(',')
    .map((part) => {
      const [range, ...params] = part.trim().toLowerCase().split(';');
      const q = Number(
        params
          .map((p) => p.trim())
          .find((p) => p.startsWith('q='))
          ?.slice(2) ?? 1,
      );
      return { range: range!.trim(), q: Number.isNaN(q) ? 1 : q };
    })
    .filter((w) => w.q > 0)
    .sort((a, b) => b.q - a.q);
  const matches = (range: string, type: string) =>
    range === '*/*' || range === type.toLowerCase() || (range.endsWith('/*') && type.toLowerCase().startsWith(range.slice(0, -1)));
  const first = wanted.flatMap((w) => mediaTypes.filter((m) => matches(w.range, m)));
  return [...new Set([...first, ...mediaTypes])];
}

function declaredHeaders(doc: OpenApiDocument, response: Json): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries((response.headers ?? {}) as Json)) {
    // The media type decides Content-Type; a declared Content-Type header only restates it.
    if (name.toLowerCase() === 'content-type') continue;
    const value = exampleValue(doc, resolveRef<Json>(doc, raw));
    if (value !== undefined) headers[name.toLowerCase()] = String(value);
  }
  return headers;
}

function listExamples(doc: OpenApiDocument, responses: Json): string[] {
  return [
    ...new Set(
      Object.entries(responses).flatMap(([status, raw]) =>
        Object.values((resolveRef<Json>(doc, raw)?.content ?? {}) as Json).flatMap((media: Json) =>
          Object.keys(isObject(media.examples) ? media.examples : {}).map((name) => `${name} (${status})`),
        ),
      ),
    ),
  ];
}
