import type * as C from '../../../generated/snapshots/types.gen.ts';
import { fail, ok, type PortolanError, type Result } from '../../lib/errors.ts';
import type { MetadataPatch, SnapshotRecord } from './snapshot-store.ts';

/** The API's collection and the GUI's page of snapshots, below the link base. */
export const API_PATH = '/snapshot-analyzer/api/snapshots';
export const GUI_PATH = '/snapshot-analyzer/gui/snapshots';

/** A snapshot is kept a year after its upload (designed, as the real service shows an expiration date). */
export const KEPT_MS = 365 * 24 * 3600 * 1000;
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;

/** The user id of an account key (`<profile>/<user id>`). */
const userOf = (account: string) => account.slice(account.indexOf('/') + 1);

/**
 * A snapshot's record as the spec's `Snapshot`, its links under `base` (the link base the request's Host
 * picked). A failed snapshot is `ERROR` with its processing messages; every other stored state reads `COMPLETE`
 * (a PROCESSING record is answered as processing before it comes here).
 */
export function snapshotRepresentation(base: string, r: SnapshotRecord): C.Snapshot {
  const link = `${base}${API_PATH}/${r.id}`;
  const uploaded = new Date(r.uploadedAtMs).toISOString();
  const user = userOf(r.uploadedBy);
  return {
    id: r.id,
    files: `${link}/files`,
    commands: `${link}/commands`,
    gui_uri: `${base}${GUI_PATH}/${r.id}`,
    chassis_serial: r.chassisSerial,
    hostname: r.hostname,
    visible_in_gui: r.visibleInGui,
    description: r.description,
    support_case: r.supportCase,
    generation_date: r.generationDate || uploaded,
    upload: {
      performed_by: { name: user, email: EMAIL.test(user) ? user : `${user.replace(/[^A-Za-z0-9._-]/g, '_') || 'user'}@users.invalid` },
      date: uploaded,
    },
    expiration_date: new Date(r.expiresAtMs ?? r.uploadedAtMs + KEPT_MS).toISOString(),
    processing_status: r.status === 'ERROR' ? 'ERROR' : 'COMPLETE',
    processing_messages: r.messages,
    file_size: r.fileSize,
    file_name: r.fileName,
    diagnostics: `${link}/diagnostics`,
  };
}

/** The body of a 202 for a snapshot that is still processing. */
export const processingRepresentation = (id: string): C.SnapshotProcessing => ({
  id,
  processing_status: 'PROCESSING',
  message: 'The snapshot is being processed.',
});

/**
 * The metadata patch of an update. `visible_in_gui` comes as a boolean (JSON) or as the text `true` or
 * `false` (a form body carries text only); anything else is refused (invalidRequest).
 */
export function snapshotPatch(body: unknown): Result<MetadataPatch, PortolanError & { code: 'invalidRequest' }> {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const patch: MetadataPatch = {};
  if (typeof fields.description === 'string') patch.description = fields.description;
  if (typeof fields.support_case === 'string') patch.support_case = fields.support_case;
  if (fields.visible_in_gui !== undefined) {
    const visible = VISIBLE.get(fields.visible_in_gui);
    if (visible === undefined) return fail({ code: 'invalidRequest', message: 'visible_in_gui must be true or false.' });
    patch.visible_in_gui = visible;
  }
  return ok(patch);
}

const VISIBLE = new Map<unknown, boolean>([
  [true, true],
  ['true', true],
  [false, false],
  ['false', false],
]);
