// The entry of a processing worker thread (processing-runner.ts starts one per snapshot job): it does the
// task in workerData and posts its phases, then the reply. Everything that costs CPU or memory in a
// snapshot's processing (gunzip, tar, reading, the rules) runs here, off the event loop that serves requests;
// the runner ends the thread when the snapshot is deleted, its job stops or the time budget is spent.
import { parentPort, workerData } from 'node:worker_threads';
import { runProcessingTask, type ProcessingPhase, type ProcessingReply, type ProcessingTask } from './processing-task.ts';

export type WorkerMessage = { type: 'phase'; phase: ProcessingPhase } | { type: 'done'; reply: ProcessingReply };

if (parentPort) {
  const port = parentPort;
  const post = (message: WorkerMessage) => port.postMessage(message);
  const reply = await runProcessingTask(workerData as ProcessingTask, (phase) => post({ type: 'phase', phase }));
  post({ type: 'done', reply });
}
