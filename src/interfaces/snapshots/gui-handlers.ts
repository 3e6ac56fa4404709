import type * as C from '../../../generated/snapshots/types.gen.ts';
import type { TypedHandler } from '../../server/handler-types.ts';
import { failedPage, HTML_TYPE, notFoundPage, PAGE_CSP, processingPage, snapshotPage } from './formats/index.ts';
import type { SnapshotService } from './snapshot-service.ts';
import { snapshotRepresentation } from './snapshot-wire.ts';

export type GuiHandlerDeps = {
  service: SnapshotService;
  /** The base URL of the record's links, from the request's Host (as the API's answers). */
  linkBase: (host: string | undefined) => string;
};

/**
 * Every page's headers: the strict policy (nothing loads or runs but its hashed style), never cached (a
 * snapshot is an account's own), not framed, not sniffed, no referrer to the solution articles it links.
 */
const PAGE_HEADERS = Object.freeze({
  'content-security-policy': PAGE_CSP,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
});

const page = <S extends number>(status: S, body: string, headers: Record<string, string> = {}) => ({
  status,
  body,
  contentType: HTML_TYPE,
  headers: { ...PAGE_HEADERS, ...headers },
});

/** The HTML pages of the GUI: a snapshot's record as a page of its findings, behind the same session as the API. */
export function createGuiHandlers(deps: GuiHandlerDeps) {
  const { service } = deps;

  // Every answer of the page is a page (the 404, 202 and 422 too); a bad id (400) and no session (403) are the API's.
  const getSnapshotPage: TypedHandler<
    C.GetSnapshotPageData,
    C.GetSnapshotPageResponses & Pick<C.GetSnapshotPageErrors, 404 | 422>,
    C.GetSnapshotPageErrors
  > = async (request) => {
    const id = request.params.snapshotId;
    const found = await service.get(request.principal!, id);
    if (!found) return page(404, notFoundPage(id));
    if (found.status === 'PROCESSING') return page(202, processingPage(id), { 'retry-after': '2' });
    const host = request.headers.host;
    const record = snapshotRepresentation(deps.linkBase(typeof host === 'string' ? host : undefined), found);
    if (found.status === 'ERROR') return page(422, failedPage(record));
    const output = await service.diagnostics(request.principal!, id);
    // Deleted between the two reads.
    if (!output) return page(404, notFoundPage(id));
    return page(200, snapshotPage(record, output));
  };

  return { getSnapshotPage };
}
