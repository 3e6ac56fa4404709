// The entry of the declaration-checking thread (declaration-checker.ts starts one and keeps it): it
// parses each body it is sent, checks it against the spec's schemas and plans its tenants, off the
// event loop every role shares, and posts back only the small answer (checked-request.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { createSpecValidator } from '../../../lib/spec-ajv.ts';
import { checkDeployRequest, type CheckedRequest } from './checked-request.ts';
import type { SchemaRange } from './declaration-check.ts';
import type { DeployRequest } from './request.ts';

export type CheckJob = { id: number; body: Uint8Array; info: SchemaRange; query: { updateMode?: DeployRequest['updateMode'] } };
export type CheckReply = { id: number; checked: CheckedRequest };
export type CheckWorkerData = { document: object };

if (parentPort) {
  const port = parentPort;
  const schemas = createSpecValidator((workerData as CheckWorkerData).document);
  const decoder = new TextDecoder();
  port.on('message', (job: CheckJob) => {
    // The adapter parsed the same bytes before the handler ran, so they are JSON.
    const body: unknown = JSON.parse(decoder.decode(job.body));
    const reply: CheckReply = { id: job.id, checked: checkDeployRequest(body, (pointer) => schemas.at(pointer), job.info, job.query) };
    port.postMessage(reply);
  });
}
