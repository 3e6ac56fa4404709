import { createSpecValidator } from '../../src/lib/spec-ajv.ts';
import { toPointer, type Finding } from './findings.ts';
import { isObject, resolveRef } from '../../src/lib/contract/json-pointer.ts';

type Json = Record<string, unknown>;

/** Media types whose examples are JSON values checked against the schema; others must be strings. */
function isStructured(mediaType: string): boolean {
  return /json|x-www-form-urlencoded|multipart\//.test(mediaType);
}

/**
 * Checks the examples of one document:
 * - every request body and every response content has at least one named example per media type;
 * - every example of a JSON, form or multipart media type validates against its schema (all errors listed);
 * - examples of other media types (XML, PDF, CSV, binary) are strings.
 */
export function checkExamples(doc: Json, file: string): Finding[] {
  const findings: Finding[] = [];
  const validator = createSpecValidator(doc);
  const report = (segments: (string | number)[], rule: string, message: string) =>
    findings.push({ file, tool: 'examples', rule, severity: 'error', pointer: toPointer(segments), message });

  const visitMediaType = (segments: string[], mediaType: string, media: Json, mustHaveExamples: boolean) => {
    const examples = isObject(media.examples) ? media.examples : undefined;
    if ('example' in media) report(segments, 'named-examples', 'use named `examples`, not `example`');
    if (mustHaveExamples && (!examples || Object.keys(examples).length === 0)) {
      report(segments, 'named-examples', `media type ${mediaType} has no named example`);
      return;
    }
    if (!examples) return;
    for (const [name, raw] of Object.entries(examples)) {
      const example = resolveRef(doc, raw);
      const at = [...segments, 'examples', name];
      if (!isObject(example) || !('value' in example)) {
        report(at, 'example-value', 'example has no `value`');
        continue;
      }
      if (!isStructured(mediaType)) {
        if (typeof example.value !== 'string') report(at, 'example-type', `a ${mediaType} example must be a string`);
        continue;
      }
      if (!media.schema) continue;
      const validate = validator.at(toPointer([...segments, 'schema']));
      if (!validate(example.value)) {
        for (const e of validate.errors ?? []) {
          report(at, 'example-invalid', `value${e.instancePath} ${e.message}${e.keyword === 'type' ? '' : ` ${JSON.stringify(e.params)}`}`);
        }
      }
    }
  };

  const visitContent = (segments: string[], content: unknown, mustHaveExamples: boolean) => {
    if (!isObject(content)) return;
    for (const [mediaType, media] of Object.entries(content)) {
      if (isObject(media)) visitMediaType([...segments, 'content', mediaType], mediaType, media, mustHaveExamples);
    }
  };

  // Walk every object: request bodies and responses (inline or in components) must carry examples;
  // any other media type object with examples (parameters with content, extensions) is still checked.
  const walk = (node: unknown, segments: string[]) => {
    if (Array.isArray(node)) {
      for (const [i, v] of node.entries()) walk(v, [...segments, String(i)]);
      return;
    }
    if (!isObject(node)) return;
    if (segments.join('/') === 'components/schemas') return; // schemas carry no media types
    const parent = segments.at(-2);
    const isBodyOrResponse = segments.at(-1) === 'requestBody' || parent === 'responses' || parent === 'requestBodies';
    if (isObject(node.content)) {
      visitContent(segments, node.content, isBodyOrResponse);
    }
    if ('schema' in node && isObject(node.examples) && parent !== 'content' && !isObject(node.content)) {
      visitMediaType(segments, 'application/json', node, false); // a parameter with examples
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'content' || key === 'examples' || key === 'schema') continue;
      walk(value, [...segments, key]);
    }
  };
  walk(doc, []);
  return findings;
}
