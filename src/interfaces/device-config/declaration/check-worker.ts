// The entry of the declaration-checking thread (declaration-checker.ts starts one and keeps it): it
// parses each body or saved declaration it is sent, checks it against the spec's schemas and prepares
// its tenants (prepared.ts), off the event loop every role shares, and posts back strings and small
// plans (checked-request.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { createSpecValidator } from '../../../lib/spec-ajv.ts';
import { checkDeployText, checkStoredRequest, prepareDeclarationText, type RequestQuery } from './checked-request.ts';
import type { SchemaRange } from './declaration-check.ts';

/** A body as posted (`deploy`), a queued request as saved (`stored`), or a saved declaration (`prepare`). */
export type CheckWork =
  | { kind: 'deploy'; body: Uint8Array; info: SchemaRange; query: RequestQuery }
  | { kind: 'stored'; text: string; info: SchemaRange }
  | { kind: 'prepare'; text: string };
export type CheckJob = CheckWork & { id: number };
export type CheckReply = { id: number; outcome: unknown };
export type CheckWorkerData = { document: object };

if (parentPort) {
  const port = parentPort;
  const schemas = createSpecValidator((workerData as CheckWorkerData).document);
  const schemaAt = (pointer: string) => schemas.at(pointer);
  const decoder = new TextDecoder();
  const run = (job: CheckJob): unknown => {
    switch (job.kind) {
      case 'deploy':
        return checkDeployText(decoder.decode(job.body), schemaAt, job.info, job.query);
      case 'stored':
        return checkStoredRequest(job.text, schemaAt, job.info);
      case 'prepare':
        return prepareDeclarationText(job.text);
    }
  };
  port.on('message', (job: CheckJob) => port.postMessage({ id: job.id, outcome: run(job) } satisfies CheckReply));
}
