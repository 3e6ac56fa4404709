import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Timers } from '../../../lib/timers.ts';
import {
  checkDeployRequest,
  checkDeployText,
  checkStoredRequest,
  prepareDeclarationText,
  type CheckedRequest,
  type RequestQuery,
} from './checked-request.ts';
// A type import, and so part of the compiled program: tsc emits the worker's entry into dist/ beside this file.
import type { CheckJob, CheckReply, CheckWork, CheckWorkerData } from './check-worker.ts';
import type { SchemaAt, SchemaRange } from './declaration-check.ts';

// The sibling with this module's own extension: check-worker.ts in the sources, .js in the built package.
const WORKER_URL = new URL(`./check-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * Bodies up to this size are parsed and checked on the event loop: linear checks of 64 KiB take a few
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
  /** A job that takes longer, counted from when the thread began it, fails alone and ends its thread (a bug: every check is linear in the body). */
  budgetMs: number;
  /** Texts over this many bytes go to the thread (default INLINE_BYTES; 0: every text). */
  inlineBytes?: number;
};

export type PreparedOutcome = ReturnType<typeof prepareDeclarationText>;

export type DeclarationChecker = {
  /** Parses, checks and prepares a deployment request's body from its bytes. */
  check(raw: Uint8Array | undefined, query: RequestQuery): Promise<CheckedRequest>;
  /** The same for a queued request as saved (checked-request.ts storedRequestText), after a restart. */
  checkStored(text: string): Promise<CheckedRequest>;
  /** Parses and prepares a saved declaration (no schema check: it was checked when deployed). */
  prepare(text: string): Promise<PreparedOutcome>;
  /** Ends the thread; jobs in progress or waiting fail. */
  close(): Promise<void>;
};

type Waiting = { work: CheckWork; resolve: (outcome: unknown) => void; reject: (error: Error) => void };

/**
 * Parses, checks and plans declarations (checked-request.ts) so that no large one holds the event
 * loop that every role shares: a small one on this thread, a large one on a worker thread of its own,
 * kept between jobs (its validators are compiled once), bounded in heap and in time. Jobs wait here
 * and go to the thread one at a time, in arrival order: each one's time budget starts when the thread
 * begins it, and one over its budget fails alone (its thread is ended, the next job gets a new one).
 *
 * @example
 * const checker = createDeclarationChecker({ document, schemas, info, timers, budgetMs: 60_000 });
 * const checked = await checker.check(request.rawBody, {});
 */
export function createDeclarationChecker(options: DeclarationCheckerOptions): DeclarationChecker {
  const inlineBytes = options.inlineBytes ?? INLINE_BYTES;
  let worker: Worker | undefined;
  let nextId = 0;
  let closed = false;
  const waiting: Waiting[] = [];
  let running: { id: number; job: Waiting; cancel: () => void } | undefined;

  /** Settles the job on the thread, if it is still `id`, and sends the next one. */
  const settle = (id: number, outcome: { value: unknown } | { error: Error }) => {
    if (!running || running.id !== id) return;
    const { job, cancel } = running;
    running = undefined;
    cancel();
    if ('error' in outcome) job.reject(outcome.error);
    else job.resolve(outcome.value);
    sendNext();
  };

  /** Ends a thread (the job it held fails); the next job starts a new one. */
  const end = (thread: Worker, error: Error) => {
    if (worker !== thread) return;
    worker = undefined;
    void thread.terminate();
    if (running) settle(running.id, { error });
  };

  const started = () => {
    if (worker) return worker;
    const thread = new Worker(WORKER_URL, {
      workerData: { document: options.document } satisfies CheckWorkerData,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    thread.on('message', ({ id, outcome }: CheckReply) => settle(id, { value: outcome }));
    thread.on('error', (error) => end(thread, new Error('the declaration check failed on its thread', { cause: error })));
    thread.on('exit', (code) => end(thread, new Error(`the declaration-checking thread stopped (exit code ${code})`)));
    worker = thread;
    return thread;
  };

  function sendNext() {
    if (running) return;
    const job = waiting.shift();
    if (!job) {
      // An idle thread keeps no process alive.
      worker?.unref();
      return;
    }
    const thread = started();
    thread.ref();
    const id = nextId++;
    const cancel = options.timers.after(
      options.budgetMs,
      () => end(thread, new Error(`the declaration check took longer than ${options.budgetMs} ms`)),
      { background: true },
    );
    running = { id, job, cancel };
    thread.postMessage({ ...job.work, id } satisfies CheckJob);
  }

  const onThread = <T>(work: CheckWork): Promise<T> => {
    if (closed) return Promise.reject(new Error('the declaration checker was closed'));
    return new Promise<T>((resolve, reject) => {
      waiting.push({ work, resolve: resolve as (outcome: unknown) => void, reject });
      sendNext();
    });
  };

  return {
    async check(raw, query) {
      // No body at all is not malformed JSON: it is a request without a class (request.ts).
      if (!raw || raw.byteLength === 0) return checkDeployRequest(undefined, await options.schemas(), options.info, query);
      if (raw.byteLength <= inlineBytes)
        return checkDeployText(
          Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'),
          await options.schemas(),
          options.info,
          query,
        );
      // A copy: the adapter's buffer may be a slice of a larger one, which must not be detached.
      return onThread({ kind: 'deploy', body: new Uint8Array(raw), info: options.info, query });
    },
    async checkStored(text) {
      if (text.length <= inlineBytes) return checkStoredRequest(text, await options.schemas(), options.info);
      return onThread({ kind: 'stored', text, info: options.info });
    },
    async prepare(text) {
      if (text.length <= inlineBytes) return prepareDeclarationText(text);
      return onThread({ kind: 'prepare', text });
    },
    async close() {
      closed = true;
      const error = new Error('the declaration checker was closed');
      for (const job of waiting.splice(0)) job.reject(error);
      if (worker) end(worker, error);
    },
  };
}
