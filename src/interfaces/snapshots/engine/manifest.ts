/** The format name `manifest.json` carries: a new layout gets a new number. */
export const MANIFEST_FORMAT = 'portolan-snapshot/1';
/** The format of a device's own archive (a UCS or a qkview: README.md, "Device archives"), which has no manifest: its fields are read from its files. */
export const DEVICE_ARCHIVE_FORMAT = 'device-archive';

/**
 * `manifest.json` at the root of a snapshot archive (README.md, "Archive format"), or what a device
 * archive says of the same (its fields '' where it does not say).
 */
export type Manifest = {
  readonly format: typeof MANIFEST_FORMAT | typeof DEVICE_ARCHIVE_FORMAT;
  readonly hostname: string;
  readonly chassisSerial: string;
  readonly platform: string;
  /** The device's software version, 2 to 4 dot-separated numbers (`17.1.0`). */
  readonly version: string;
  /** When the snapshot was taken, an ISO 8601 date-time in UTC or with an offset. */
  readonly generatedAt: string;
};

export type ManifestCheck = { ok: true; manifest: Manifest } | { ok: false; message: string };

const FIELDS = ['format', 'hostname', 'chassisSerial', 'platform', 'version', 'generatedAt'] as const;
const HOSTNAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;
const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/;
export const VERSION_FORM = /^\d{1,5}(?:\.\d{1,5}){1,3}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

const CHECKS: Record<Exclude<(typeof FIELDS)[number], 'format'>, [RegExp, string]> = {
  hostname: [HOSTNAME, 'a host name (letters, digits, dots and hyphens, at most 253 characters)'],
  chassisSerial: [PRINTABLE, 'printable ASCII, 1 to 64 characters'],
  platform: [PRINTABLE, 'printable ASCII, 1 to 64 characters'],
  version: [VERSION_FORM, 'a software version of 2 to 4 dot-separated numbers, like 17.1.0'],
  generatedAt: [ISO_DATE_TIME, 'an ISO 8601 date-time with a zone, like 2026-11-02T09:30:00Z'],
};

/**
 * Checks a parsed `manifest.json`; the message names the first wrong field and what it should be.
 * Unknown fields are refused too, so a misspelt one (`chassis_serial`) is not silently ignored.
 *
 * @example validateManifest(JSON.parse(text)) // { ok: false, message: 'manifest.json: version must be ...' }
 */
export function validateManifest(value: unknown): ManifestCheck {
  const fail = (message: string): ManifestCheck => ({ ok: false, message: `manifest.json: ${message}` });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('must be a JSON object');
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0) return fail(`unknown field ${JSON.stringify(unknown[0]!.slice(0, 40))} (the fields are ${FIELDS.join(', ')})`);
  if (record.format !== MANIFEST_FORMAT) return fail(`format must be ${JSON.stringify(MANIFEST_FORMAT)}`);
  for (const [field, [form, description]] of Object.entries(CHECKS)) {
    const given = record[field];
    if (given === undefined) return fail(`${field} is missing (${description})`);
    if (typeof given !== 'string' || !form.test(given)) return fail(`${field} must be ${description}`);
  }
  if (Number.isNaN(Date.parse(record.generatedAt as string))) return fail('generatedAt is not a real date');
  return { ok: true, manifest: Object.freeze({ ...record }) as Manifest };
}
