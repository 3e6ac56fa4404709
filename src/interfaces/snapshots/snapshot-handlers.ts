import type * as C from '../../../generated/snapshots/types.gen.ts';
import { fail, ok, type Result } from '../../lib/errors.ts';
import {
  refusal,
  refuse,
  type HandlerFailure,
  type HandlerRequest,
  type HandlerResponse,
  type TypedHandler,
} from '../../server/handler-types.ts';
import { selectDiagnostics } from './engine/index.ts';
import { diagnosticsCsv, diagnosticsPdf, MEDIA_TYPES, negotiate, type Format } from './formats/index.ts';
import * as xml from './formats/index.ts';
import type { SnapshotRecord, SnapshotService } from './snapshot-service.ts';
import type { MetadataPatch } from './snapshot-store.ts';
import { API_PATH, processingRepresentation, snapshotRepresentation } from './snapshot-wire.ts';
import type { UpdateBodyError, UpdateBodyRequest } from './update-body-handlers.ts';
import { MISSING_SNAPSHOT_FIELD } from './upload.ts';

export type SnapshotHandlerDeps = {
  service: SnapshotService;
  /** The base URL of the links in an answer, from the request's Host (diagnosticsLinkBase: only a name the site lists). */
  linkBase: (host: string | undefined) => string;
  /** The metadata update of a PUT, in JSON, a form or XML, checked against the spec (createUpdateBodyReader). */
  readUpdate: (request: UpdateBodyRequest) => Promise<Result<MetadataPatch, UpdateBodyError>>;
};

const XML_OR_JSON: readonly Format[] = ['xml', 'json'];
const EVERY_FORMAT: readonly Format[] = ['xml', 'json', 'pdf', 'csv'];
const READ_ONLY = 'Snapshot 0 is the shared sample and is read-only.';

/** The bodies of the API's resources, by kind: each has its JSON value and its XML form. */
type Bodies = {
  snapshot: C.Snapshot;
  snapshot_ids: C.SnapshotIdList;
  snapshot_processing: C.SnapshotProcessing;
  files: C.SnapshotFileList;
  commands: C.SnapshotCommandList;
  file: C.SnapshotFile;
  command: C.SnapshotCommand;
};
const XML_OF: { readonly [K in keyof Bodies]: (value: Bodies[K]) => string } = {
  snapshot: xml.snapshotXml,
  snapshot_ids: xml.snapshotIdsXml,
  snapshot_processing: xml.processingXml,
  files: xml.filesXml,
  commands: xml.commandsXml,
  file: xml.fileXml,
  command: xml.commandXml,
};

/** An operation's answers in the negotiated format: the spec's JSON body, or the same as XML text (and `Extra`). */
type InFormats<R, Extra = never> = { [S in keyof R]: R[S] | string | Extra };

/** An answer in the negotiated format (XML or JSON). */
function answer<S extends number, K extends keyof Bodies>(
  status: S,
  format: Format,
  kind: K,
  value: Bodies[K],
  headers?: HandlerResponse['headers'],
) {
  const body: Bodies[K] | string = format === 'json' ? value : XML_OF[kind](value);
  return { status, body, contentType: MEDIA_TYPES[format], ...(headers ? { headers } : {}) };
}

/** 202 with the processing body and `Retry-After` (the seed polls every 2 seconds). */
const processing = (format: Format, id: string) =>
  answer(202, format, 'snapshot_processing', processingRepresentation(id), { 'retry-after': '2' });

const notFound = (id: string) => refuse('objectNotFound', `Snapshot ${id} was not found.`);

const notAcceptable = (request: Pick<HandlerRequest, 'headers'>, offered: readonly Format[]) =>
  refuse(
    'notAcceptable',
    `Unsupported Accept: ${clip(String(request.headers.accept))}. Use ${offered.map((f) => MEDIA_TYPES[f]).join(', ')}.`,
  );
const clip = (text: string, max = 64) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** The request parts every handler here reads: headers, and the account the session named. */
type SessionRequest = Pick<HandlerRequest, 'headers' | 'principal'>;

/**
 * Wraps a handler with the Accept negotiation: notAcceptable (406) before anything else. Typed by where
 * it is assigned (a TypedHandler), so each operation's answers and failures are checked against its spec.
 */
const negotiated =
  <TRequest extends SessionRequest, TOutcome>(
    offered: readonly Format[],
    handle: (request: TRequest, format: Format) => Promise<TOutcome>,
  ) =>
  async (request: TRequest): Promise<TOutcome | HandlerFailure<'notAcceptable'>> => {
    const format = negotiate(request.headers.accept, offered);
    return format ? handle(request, format) : notAcceptable(request, offered);
  };

/** The snapshot diagnostics API's handlers (HTTP <-> the snapshot service): formats, states, links. */
export function createSnapshotHandlers(deps: SnapshotHandlerDeps) {
  const { service } = deps;

  const base = (request: SessionRequest) => {
    const host = request.headers.host;
    return deps.linkBase(typeof host === 'string' ? host : undefined);
  };
  const record = (request: SessionRequest, r: SnapshotRecord) => snapshotRepresentation(base(request), r);

  /**
   * The seed's states for a part of a snapshot: unknown objectNotFound (404), processing 202, failed
   * unprocessable (422) with the processing messages, else the ready record.
   */
  async function ready(request: SessionRequest, format: Format, id: string) {
    const found = await service.get(request.principal!, id);
    if (!found) return fail(notFound(id));
    if (found.status === 'PROCESSING') return fail(processing(format === 'json' ? 'json' : 'xml', id));
    if (found.status === 'ERROR')
      return fail(refuse('unprocessable', `Processing of snapshot ${id} failed: ${found.messages.join(' ') || 'no message'}`));
    return ok(found);
  }

  /** A part of a processed snapshot (XML or JSON): 404, 202 or 422 first, as `ready` says. */
  const whenReady = <TRequest extends SessionRequest & { params: { snapshotId: string } }, TOutcome>(
    handle: (request: TRequest, format: Format, id: string) => Promise<TOutcome>,
  ) =>
    negotiated(XML_OR_JSON, async (request: TRequest, format) => {
      const id = request.params.snapshotId;
      const state = await ready(request, format, id);
      return state.ok ? handle(request, format, id) : state.error;
    });

  const listSnapshots: TypedHandler<C.ListSnapshotsData, InFormats<C.ListSnapshotsResponses>, C.ListSnapshotsErrors> = negotiated(
    XML_OR_JSON,
    async (request, format) => answer(200, format, 'snapshot_ids', { id: await service.list(request.principal!) }),
  );

  // The 302 to the new snapshot is the success; a refused upload is the service's registry failure.
  const uploadSnapshot: TypedHandler<C.UploadSnapshotData, { 302: undefined }, C.UploadSnapshotErrors> = negotiated(
    XML_OR_JSON,
    async (request) => {
      if (!request.bodyStream) return refuse('invalidRequest', MISSING_SNAPSHOT_FIELD);
      const { 'content-type': contentType, 'content-length': contentLength } = request.headers;
      const outcome = await service.upload(request.principal!, request.principal!, {
        contentType,
        stream: request.bodyStream,
        contentLength,
      });
      if (!outcome.ok) return refusal(outcome.error);
      return { status: 302 as const, body: undefined, headers: { location: `${base(request)}${API_PATH}/${outcome.value.id}` } };
    },
  );

  const deleteAllSnapshots: TypedHandler<
    C.DeleteAllSnapshotsData,
    InFormats<C.DeleteAllSnapshotsResponses>,
    C.DeleteAllSnapshotsErrors
  > = negotiated(XML_OR_JSON, async (request, format) =>
    answer(200, format, 'snapshot_ids', { id: await service.removeAll(request.principal!) }),
  );

  // A failed snapshot answers 422 with its record (the spec's 422 body here is the Snapshot, not an error).
  const getSnapshot: TypedHandler<
    C.GetSnapshotData,
    InFormats<C.GetSnapshotResponses & Pick<C.GetSnapshotErrors, 422>>,
    C.GetSnapshotErrors
  > = negotiated(XML_OR_JSON, async (request, format) => {
    const id = request.params.snapshotId;
    const found = await service.get(request.principal!, id);
    if (!found) return notFound(id);
    if (found.status === 'PROCESSING') return processing(format, id);
    if (found.status === 'ERROR') return answer(422, format, 'snapshot', record(request, found));
    return answer(200, format, 'snapshot', record(request, found));
  });

  const updateSnapshot: TypedHandler<C.UpdateSnapshotData, InFormats<C.UpdateSnapshotResponses>, C.UpdateSnapshotErrors> = negotiated(
    XML_OR_JSON,
    async (request, format) => {
      const id = request.params.snapshotId;
      const patch = await deps.readUpdate(request);
      if (!patch.ok) return refusal(patch.error);
      const updated = await service.update(request.principal!, id, patch.value);
      if (updated === 'read-only') return refuse('forbidden', READ_ONLY);
      if (!updated) return notFound(id);
      if (updated.status === 'PROCESSING') return processing(format, id);
      return answer(200, format, 'snapshot', record(request, updated));
    },
  );

  const deleteSnapshot: TypedHandler<C.DeleteSnapshotData, InFormats<C.DeleteSnapshotResponses>, C.DeleteSnapshotErrors> = negotiated(
    XML_OR_JSON,
    async (request, format) => {
      const id = request.params.snapshotId;
      const outcome = await service.remove(request.principal!, id);
      if (outcome === 'read-only') return refuse('forbidden', READ_ONLY);
      if (outcome === 'not-found') return notFound(id);
      return answer(200, format, 'snapshot_ids', { id: [id] });
    },
  );

  const getSnapshotDiagnostics: TypedHandler<
    C.GetSnapshotDiagnosticsData,
    InFormats<C.GetSnapshotDiagnosticsResponses, Buffer>,
    C.GetSnapshotDiagnosticsErrors
  > = negotiated(EVERY_FORMAT, async (request, format) => {
    const id = request.params.snapshotId;
    const state = await ready(request, format, id);
    if (!state.ok) return state.error;
    const all = await service.diagnostics(request.principal!, id);
    if (!all) return notFound(id);
    const output = selectDiagnostics(all, request.query.set ?? 'all');
    switch (format) {
      case 'json':
        return { status: 200 as const, body: output, contentType: MEDIA_TYPES.json };
      case 'xml':
        return { status: 200 as const, body: xml.diagnosticsXml(output), contentType: MEDIA_TYPES.xml };
      case 'csv':
        return {
          status: 200 as const,
          body: diagnosticsCsv(output),
          contentType: MEDIA_TYPES.csv,
          headers: { 'content-disposition': `attachment; filename="snapshot-${id}-diagnostics.csv"` },
        };
      case 'pdf': {
        const r = state.value;
        const pdf = await diagnosticsPdf(output, {
          id,
          hostname: r.hostname,
          chassisSerial: r.chassisSerial,
          platform: r.platform,
          version: r.version,
          generationDate: r.generationDate,
        });
        return {
          status: 200 as const,
          body: pdf,
          contentType: MEDIA_TYPES.pdf,
          headers: { 'content-disposition': `attachment; filename="snapshot-${id}-diagnostics.pdf"` },
        };
      }
    }
  });

  const listSnapshotFiles: TypedHandler<
    C.ListSnapshotFilesData,
    InFormats<C.ListSnapshotFilesResponses>,
    C.ListSnapshotFilesErrors
  > = whenReady(async (request, format, id) => answer(200, format, 'files', { file: (await service.files(request.principal!, id)) ?? [] }));

  const getSnapshotFile: TypedHandler<C.GetSnapshotFileData, InFormats<C.GetSnapshotFileResponses>, C.GetSnapshotFileErrors> = whenReady(
    async (request, format, id) => {
      const file = await service.file(request.principal!, id, request.params.fileId);
      return file ? answer(200, format, 'file', file) : refuse('objectNotFound', `Snapshot ${id} has no item ${request.params.fileId}.`);
    },
  );

  const listSnapshotCommands: TypedHandler<
    C.ListSnapshotCommandsData,
    InFormats<C.ListSnapshotCommandsResponses>,
    C.ListSnapshotCommandsErrors
  > = whenReady(async (request, format, id) =>
    answer(200, format, 'commands', { command: (await service.commands(request.principal!, id)) ?? [] }),
  );

  const getSnapshotCommand: TypedHandler<
    C.GetSnapshotCommandData,
    InFormats<C.GetSnapshotCommandResponses>,
    C.GetSnapshotCommandErrors
  > = whenReady(async (request, format, id) => {
    const command = await service.command(request.principal!, id, request.params.commandId);
    return command
      ? answer(200, format, 'command', command)
      : refuse('objectNotFound', `Snapshot ${id} has no item ${request.params.commandId}.`);
  });

  return {
    /** notAcceptable (406) for an Accept the API cannot serve (XML or JSON offered): the login's answers come in these formats too. */
    notAcceptable: (request: Pick<HandlerRequest, 'headers'>) => notAcceptable(request, XML_OR_JSON),
    listSnapshots,
    uploadSnapshot,
    deleteAllSnapshots,
    getSnapshot,
    updateSnapshot,
    deleteSnapshot,
    getSnapshotDiagnostics,
    listSnapshotFiles,
    getSnapshotFile,
    listSnapshotCommands,
    getSnapshotCommand,
  };
}
