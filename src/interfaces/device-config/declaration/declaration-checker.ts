import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Timers } from '../../../lib/timers.ts';
import { checkDeployRequest, type CheckedRequest } from './checked-request.ts';
// A type import, and so part of the compiled program: tsc emits the worker's entry into dist/ beside this file.
import type { CheckJob, CheckReply, CheckWorkerData } from './check-worker.ts';
import type { SchemaAt, SchemaRange } from './declaration-check.ts';
import type { DeployRequest } from './request.ts';

// The sibling with this module's own extension: check-worker.ts in the sources, .js in the built package.
const WORKER_URL = new URL(`./check-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * Bodies up to this size are checked on the event loop: linear checks of 64 KiB take a few
 * milliseconds, less than a round trip to the thread (measured: ~1 ms for a real declaration inline).
 */
export const INLINE_BYTES = 64 * 1024;
/** The thread's JavaScript heap, in MiB: a 2 MiB body parses to at most ~150 MiB of objects. */
const WORKER_HEAP_MB = 512;

export type DeclarationCheckerOptions = {
  /** The device's spec (its schemas), for the thread's own validators. */
  document: object;
  /** The same schemas on this thread, for small bodies (loaded on first use). */
  schemas: () => Promise<SchemaAt>;
  info: SchemaRange;
  timers: Timers;
  /** A check that takes longer ends its thread and fails (a bug: every check is linear in the body). */
  budgetMs: number;
  /** Bodies over this many bytes go to the thread (default INLINE_BYTES; 0: every body). */
  inlineBytes?: number;
};

export type DeclarationChecker = {
  /** Checks and plans a deployment request; `raw` are the bytes `body` was parsed from. */
  check(body: unknown, raw: Uint8Array | undefined, query: { updateMode?: DeployRequest['updateMode'] }): Promise<CheckedRequest>;
  /** Ends the thread; checks in progress fail. */
  close(): Promise<void>;
};

/**
 * Checks and plans declarations (checked-request.ts) so that no body holds the event loop that every
 * role shares: a large one is checked on a worker thread of its own, kept between requests (its
 * validators are compiled once), bounded in heap and in time, one body at a time in arrival order.
 *
 * @example
 * const checker = createDeclarationChecker({ document, schemas, info, timers, budgetMs: 60_000 });
 * const checked = await checker.check(request.body, request.rawBody, {});
 */
export function createDeclarationChecker(options: DeclarationCheckerOptions): DeclarationChecker {
  const inlineBytes = options.inlineBytes ?? INLINE_BYTES;
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, { resolve: (checked: CheckedRequest) => void; reject: (error: Error) => void; cancel: () => void }>();

  /** Ends the thread and fails every check it held; the next check starts a new one. */
  const fail = (ended: Worker, error: Error) => {
    if (worker !== ended) return;
    worker = undefined;
    void ended.terminate();
    for (const [id, job] of pending) {
      pending.delete(id);
      job.cancel();
      job.reject(error);
    }
  };

  const started = () => {
    if (worker) return worker;
    const thread = new Worker(WORKER_URL, {
      workerData: { document: options.document } satisfies CheckWorkerData,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    thread.on('message', ({ id, checked }: CheckReply) => {
      const job = pending.get(id);
      pending.delete(id);
      if (pending.size === 0) thread.unref();
      job?.cancel();
      job?.resolve(checked);
    });
    thread.on('error', (error) => fail(thread, new Error('the declaration check failed on its thread', { cause: error })));
    thread.on('exit', (code) => fail(thread, new Error(`the declaration-checking thread stopped (exit code ${code})`)));
    worker = thread;
    return thread;
  };

  return {
    async check(body, raw, query) {
      if (!raw || raw.byteLength <= inlineBytes) return checkDeployRequest(body, await options.schemas(), options.info, query);
      const thread = started();
      // Alive while it holds a check; an idle thread keeps no process alive.
      thread.ref();
      const id = nextId++;
      return new Promise<CheckedRequest>((resolve, reject) => {
        const cancel = options.timers.after(options.budgetMs, () =>
          fail(thread, new Error(`the declaration check took longer than ${options.budgetMs} ms`)), { background: true });
        pending.set(id, { resolve, reject, cancel });
        // A copy: the adapter's buffer may be a slice of a larger one, which must not be detached.
        thread.postMessage({ id, body: new Uint8Array(raw), info: options.info, query } satisfies CheckJob);
      });
    },
    async close() {
      const thread = worker;
      if (thread) fail(thread, new Error('the declaration checker was closed'));
    },
  };
}
