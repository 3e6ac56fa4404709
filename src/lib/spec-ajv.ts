import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

// ajv and ajv-formats are CommonJS with a default export.
const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const addFormats = addFormatsModule.default ?? addFormatsModule;

/** OpenAPI 3.1 keywords and formats that are not JSON Schema vocabulary but may appear in schemas. */
const OPENAPI_KEYWORDS = ['xml', 'discriminator', 'example', 'externalDocs', 'x-origin'];
const OPENAPI_FORMATS = ['binary', 'byte', 'int32', 'int64', 'float', 'double', 'password'];

/**
 * An ajv instance that knows one whole OpenAPI 3.1 document, so any schema in it can be compiled by
 * JSON pointer with its local `$ref`s resolved.
 */
export function createSpecValidator(doc: object, key = 'spec') {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
  addFormats(ajv);
  for (const keyword of OPENAPI_KEYWORDS) ajv.addKeyword(keyword);
  for (const format of OPENAPI_FORMATS) ajv.addFormat(format, true);
  // Not checked against the JSON Schema meta-schema here (150 ms for the eight specs, most of a mock's
  // start): the spec tests lint every document, and a schema ajv cannot compile still fails at `at()`.
  ajv.addSchema(doc, key, undefined, false);
  const cache = new Map<string, ValidateFunction>();
  return {
    ajv,
    /** The validator for the schema at `pointer` (a JSON pointer into the document). */
    at(pointer: string): ValidateFunction {
      let fn = cache.get(pointer);
      if (!fn) {
        fn = ajv.compile({ $ref: `${key}#${encodeURI(pointer)}` });
        cache.set(pointer, fn);
      }
      return fn;
    },
  };
}
