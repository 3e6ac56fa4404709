import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Timers } from '../../lib/timers.ts';
import type { ProcessingReply, ProcessingTask } from './processing-task.ts';
// A type import, and so part of the compiled program: tsc emits the worker's entry into dist/ beside this file.
import type { WorkerMessage } from './processing-worker.ts';

/**
 * Runs a processing task to its reply. Aborting `signal` stops the work at once: the promise rejects with
 * the signal's reason once nothing of the task runs any more. A task that crashes rejects (worth another
 * attempt); over its budgets it resolves `{ ok: false, message }` (the snapshot fails).
 */
export type ProcessingRunner = (task: ProcessingTask, signal: AbortSignal) => Promise<ProcessingReply>;

export type WorkerRunnerOptions = {
  /** The time budget (PORTOLAN_SNAPSHOT_TIME_BUDGET_MS) is counted on these. */
  timers: Timers;
  timeBudgetMs: number;
  /** The thread's JavaScript heap, in MiB (default WORKER_HEAP_MB); beyond it the task fails. */
  heapMb?: number;
  /** Sees each thread as it starts (tests wait for its messages and its exit). */
  onWorker?: (worker: Worker) => void;
};

/** The heap of a processing thread: the rules read at most 64 MiB of text (README of the engine); twice that as strings, and room. */
export const WORKER_HEAP_MB = 512;

// The sibling with this module's own extension: processing-worker.ts in the sources, .js in the built package.
const WORKER_URL = new URL(`./processing-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** The thread ended without answering: a bug or a fault of the runtime, worth another attempt (the job port counts them). */
export class WorkerCrash extends Error {
  override name = 'WorkerCrash';
}

/**
 * Runs each task on a worker thread of its own, so that a hostile snapshot never holds up the event loop
 * that serves requests, and ends the thread (worker.terminate(): it stops even a loop that never yields)
 * when the signal aborts or the time budget is spent. Node closes the files a thread opened when it ends.
 *
 * @example
 * const run = createWorkerRunner({ timers, timeBudgetMs: 60_000 });
 * const reply = await run({ kind: 'unpack', archivePath, filesDir, limits, rules: ruleSet.source }, signal);
 */
export function createWorkerRunner(options: WorkerRunnerOptions): ProcessingRunner {
  const { timers, timeBudgetMs } = options;
  const heapMb = options.heapMb ?? WORKER_HEAP_MB;
  return (task, signal) =>
    new Promise<ProcessingReply>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const worker = new Worker(WORKER_URL, { workerData: task, resourceLimits: { maxOldGenerationSizeMb: heapMb } });
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        cancelBudget();
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      // The outcome is given once the thread has stopped: nothing it started writes after the caller cleans up.
      const stopThen = (outcome: () => void) => settle(() => void worker.terminate().then(outcome, outcome));
      const onAbort = () => stopThen(() => reject(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      const seconds = timeBudgetMs / 1000;
      const cancelBudget = timers.after(timeBudgetMs, () =>
        stopThen(() => resolve({ ok: false, message: `processing took longer than the time budget of ${seconds} s per snapshot` })),
      );
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'done') settle(() => resolve(message.reply));
      });
      worker.on('error', (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY')
          stopThen(() => resolve({ ok: false, message: `processing needed more than ${heapMb} MiB of memory` }));
        else
          stopThen(() =>
            reject(new WorkerCrash(`the processing thread failed (${error.name}${error.code ? ` ${error.code}` : ''})`, { cause: error })),
          );
      });
      worker.on('exit', (code) =>
        settle(() => reject(new WorkerCrash(`the processing thread stopped without an answer (exit code ${code})`))),
      );
      options.onWorker?.(worker);
    });
}
