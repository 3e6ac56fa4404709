import type * as C from '../../../generated/snapshots/types.gen.ts';
import type { Handler, HandlerRequest, HandlerResponse } from '../../server/handler-types.ts';
import { selectDiagnostics } from './engine/index.ts';
import { diagnosticsCsv, diagnosticsPdf, errorFormat, MEDIA_TYPES, negotiate, type Format } from './formats/index.ts';
import * as xml from './formats/index.ts';
import type { SnapshotRecord, SnapshotService } from './snapshot-service.ts';

export type SnapshotHandlerDeps = {
  service: SnapshotService;
  /** The base URL of the links in an answer, from the request's Host (diagnosticsLinkBase: only a name the site lists). */
  linkBase: (host: string | undefined) => string;
};

const API = '/snapshot-analyzer/api/snapshots';
const GUI = '/snapshot-analyzer/gui/snapshots';
const XML_OR_JSON: readonly Format[] = ['xml', 'json'];
const EVERY_FORMAT: readonly Format[] = ['xml', 'json', 'pdf', 'csv'];
/** A snapshot is kept a year after its upload (designed, as the real service shows an expiration date). */
const KEPT_MS = 365 * 24 * 3600 * 1000;
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;

type Body = 'snapshot' | 'snapshot_ids' | 'snapshot_processing' | 'files' | 'commands' | 'file' | 'command';
const XML_OF: Readonly<Record<Body, (value: never) => string>> = {
  snapshot: xml.snapshotXml,
  snapshot_ids: xml.snapshotIdsXml,
  snapshot_processing: xml.processingXml,
  files: xml.filesXml,
  commands: xml.commandsXml,
  file: xml.fileXml,
  command: xml.commandXml,
};

/** An answer in the negotiated format (XML or JSON). */
function answer(status: number, format: Format, kind: Body, value: object, headers?: HandlerResponse['headers']): HandlerResponse {
  const body = format === 'json' ? value : XML_OF[kind](value as never);
  return { status, body, contentType: MEDIA_TYPES[format], ...(headers ? { headers } : {}) };
}

/** C's error body `{code, message}`, XML unless the Accept header asks for JSON. */
export function errorAnswer(request: Pick<HandlerRequest, 'headers'>, status: number, message: string): HandlerResponse {
  const format = errorFormat(request.headers.accept);
  const body = { code: status, message };
  return { status, body: format === 'json' ? body : xml.errorXml(body), contentType: MEDIA_TYPES[format] };
}

const notAcceptable = (request: HandlerRequest, offered: readonly Format[]) =>
  errorAnswer(
    request,
    406,
    `Unsupported Accept: ${clip(String(request.headers.accept))}. Use ${offered.map((f) => MEDIA_TYPES[f]).join(', ')}.`,
  );
const clip = (text: string, max = 64) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** The user id of an account key (`<profile>/<user id>`). */
const userOf = (account: string) => account.slice(account.indexOf('/') + 1);

/** The snapshot diagnostics API's handlers (HTTP <-> the snapshot service): formats, states, links. */
export function createSnapshotHandlers(deps: SnapshotHandlerDeps) {
  const { service } = deps;

  const base = (request: HandlerRequest) => {
    const host = request.headers.host;
    return deps.linkBase(typeof host === 'string' ? host : undefined);
  };

  const record = (request: HandlerRequest, r: SnapshotRecord): C.Snapshot => {
    const link = `${base(request)}${API}/${r.id}`;
    const uploaded = new Date(r.uploadedAtMs).toISOString();
    const user = userOf(r.uploadedBy);
    return {
      id: r.id,
      files: `${link}/files`,
      commands: `${link}/commands`,
      gui_uri: `${base(request)}${GUI}/${r.id}`,
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
      expiration_date: new Date(r.uploadedAtMs + KEPT_MS).toISOString(),
      processing_status: r.status === 'ERROR' ? 'ERROR' : 'COMPLETE',
      processing_messages: r.messages,
      file_size: r.fileSize,
      file_name: r.fileName,
      diagnostics: `${link}/diagnostics`,
    };
  };

  const processing = (format: Format, id: string) =>
    answer(
      202,
      format,
      'snapshot_processing',
      { id, processing_status: 'PROCESSING', message: 'The snapshot is being processed.' },
      { 'retry-after': '2' },
    );

  /**
   * The seed's states for anything read from a snapshot: unknown 404, processing 202, failed 422 (the
   * record for GET of the snapshot itself, an error for its parts), else the ready record.
   */
  async function ready(
    request: HandlerRequest,
    format: Format,
    id: string,
    failedWithRecord = false,
  ): Promise<{ ok: true; record: SnapshotRecord } | { ok: false; response: HandlerResponse }> {
    const found = await service.get(request.principal!, id);
    if (!found) return { ok: false, response: errorAnswer(request, 404, `Snapshot ${id} was not found.`) };
    if (found.status === 'PROCESSING') return { ok: false, response: processing(format === 'json' ? 'json' : 'xml', id) };
    if (found.status === 'ERROR') {
      if (failedWithRecord) return { ok: false, response: answer(422, format, 'snapshot', record(request, found)) };
      return {
        ok: false,
        response: errorAnswer(request, 422, `Processing of snapshot ${id} failed: ${found.messages.join(' ') || 'no message'}`),
      };
    }
    return { ok: true, record: found };
  }

  /** Wraps a handler with the Accept negotiation: 406 before anything else. */
  const negotiated =
    (offered: readonly Format[], handle: (request: HandlerRequest, format: Format) => Promise<HandlerResponse>): Handler =>
    async (request) => {
      const format = negotiate(request.headers.accept, offered);
      return format ? handle(request, format) : notAcceptable(request, offered);
    };

  /** A part of a processed snapshot (XML or JSON): 404, 202 or 422 first, as `ready` says. */
  const whenReady = (handle: (request: HandlerRequest, format: Format, id: string) => Promise<HandlerResponse>): Handler =>
    negotiated(XML_OR_JSON, async (request, format) => {
      const id = request.params.snapshotId!;
      const state = await ready(request, format, id);
      return state.ok ? handle(request, format, id) : state.response;
    });

  return {
    /** 406 for an Accept the API cannot serve (XML or JSON offered). */
    notAcceptable: (request: HandlerRequest) => notAcceptable(request, XML_OR_JSON),
    listSnapshots: negotiated(XML_OR_JSON, async (request, format) =>
      answer(200, format, 'snapshot_ids', { id: await service.list(request.principal!) }),
    ),

    uploadSnapshot: negotiated(XML_OR_JSON, async (request) => {
      if (!request.bodyStream) return errorAnswer(request, 400, 'The multipart file field snapshot is required.');
      const { 'content-type': contentType, 'content-length': contentLength } = request.headers;
      const outcome = await service.upload(request.principal!, request.principal!, {
        contentType,
        stream: request.bodyStream,
        contentLength,
      });
      if (!outcome.ok) return errorAnswer(request, outcome.status, outcome.message);
      return { status: 302, headers: { location: `${base(request)}${API}/${outcome.id}` } };
    }),

    deleteAllSnapshots: negotiated(XML_OR_JSON, async (request, format) =>
      answer(200, format, 'snapshot_ids', { id: await service.removeAll(request.principal!) }),
    ),

    getSnapshot: negotiated(XML_OR_JSON, async (request, format) => {
      const state = await ready(request, format, request.params.snapshotId!, true);
      return state.ok ? answer(200, format, 'snapshot', record(request, state.record)) : state.response;
    }),

    updateSnapshot: negotiated(XML_OR_JSON, async (request, format) => {
      const id = request.params.snapshotId!;
      const body = request.body as Record<string, unknown>;
      const patch: { description?: string; support_case?: string; visible_in_gui?: boolean } = {};
      if (typeof body.description === 'string') patch.description = body.description;
      if (typeof body.support_case === 'string') patch.support_case = body.support_case;
      if (body.visible_in_gui !== undefined) {
        const visible =
          body.visible_in_gui === true || body.visible_in_gui === 'true'
            ? true
            : body.visible_in_gui === false || body.visible_in_gui === 'false'
              ? false
              : undefined;
        if (visible === undefined) return errorAnswer(request, 400, 'visible_in_gui must be true or false.');
        patch.visible_in_gui = visible;
      }
      const updated = await service.update(request.principal!, id, patch);
      if (updated === 'read-only') return errorAnswer(request, 403, 'Snapshot 0 is the shared sample and is read-only.');
      if (!updated) return errorAnswer(request, 404, `Snapshot ${id} was not found.`);
      if (updated.status === 'PROCESSING') return processing(format, id);
      return answer(200, format, 'snapshot', record(request, updated));
    }),

    deleteSnapshot: negotiated(XML_OR_JSON, async (request, format) => {
      const id = request.params.snapshotId!;
      const outcome = await service.remove(request.principal!, id);
      if (outcome === 'read-only') return errorAnswer(request, 403, 'Snapshot 0 is the shared sample and is read-only.');
      if (outcome === 'not-found') return errorAnswer(request, 404, `Snapshot ${id} was not found.`);
      return answer(200, format, 'snapshot_ids', { id: [id] });
    }),

    getSnapshotDiagnostics: negotiated(EVERY_FORMAT, async (request, format) => {
      const id = request.params.snapshotId!;
      const state = await ready(request, format, id);
      if (!state.ok) return state.response;
      const all = await service.diagnostics(request.principal!, id);
      if (!all) return errorAnswer(request, 404, `Snapshot ${id} was not found.`);
      const set = (request.query.set as 'hit' | 'miss' | 'all' | undefined) ?? 'all';
      const output = selectDiagnostics(all, set);
      switch (format) {
        case 'json':
          return { status: 200, body: output, contentType: MEDIA_TYPES.json };
        case 'xml':
          return { status: 200, body: xml.diagnosticsXml(output), contentType: MEDIA_TYPES.xml };
        case 'csv':
          return {
            status: 200,
            body: diagnosticsCsv(output),
            contentType: MEDIA_TYPES.csv,
            headers: { 'content-disposition': `attachment; filename="snapshot-${id}-diagnostics.csv"` },
          };
        case 'pdf': {
          const r = state.record;
          const pdf = await diagnosticsPdf(output, {
            id,
            hostname: r.hostname,
            chassisSerial: r.chassisSerial,
            platform: r.platform,
            version: r.version,
            generationDate: r.generationDate,
          });
          return {
            status: 200,
            body: pdf,
            contentType: MEDIA_TYPES.pdf,
            headers: { 'content-disposition': `attachment; filename="snapshot-${id}-diagnostics.pdf"` },
          };
        }
      }
    }),

    listSnapshotFiles: whenReady(async (request, format, id) =>
      answer(200, format, 'files', { file: (await service.files(request.principal!, id)) ?? [] }),
    ),

    getSnapshotFile: whenReady(async (request, format, id) => {
      const file = await service.file(request.principal!, id, request.params.fileId!);
      return file ? answer(200, format, 'file', file) : errorAnswer(request, 404, `Snapshot ${id} has no item ${request.params.fileId}.`);
    }),

    listSnapshotCommands: whenReady(async (request, format, id) =>
      answer(200, format, 'commands', { command: (await service.commands(request.principal!, id)) ?? [] }),
    ),

    getSnapshotCommand: whenReady(async (request, format, id) => {
      const command = await service.command(request.principal!, id, request.params.commandId!);
      return command
        ? answer(200, format, 'command', command)
        : errorAnswer(request, 404, `Snapshot ${id} has no item ${request.params.commandId}.`);
    }),
  };
}
