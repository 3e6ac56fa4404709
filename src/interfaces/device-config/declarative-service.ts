import type { ValidateFunction } from 'ajv';
import type { Clock } from '../../lib/clock.ts';
import { fail, ok, type Result } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import {
  acceptedTask,
  type BusyError,
  type DeployError,
  type DeployOutcome,
  deployResult,
  deploymentBusy,
  failedRecord,
  type OperationOutcome as Outcome,
  queuedRecord,
  recordOf,
} from './appsvcs-outcome.ts';
import { storedRequestText, type ReadyRequest, type RequestQuery } from './declaration/checked-request.ts';
import { createDeclarationChecker } from './declaration/declaration-checker.ts';
import type { Database } from '../../stores/database.ts';
import type { DeclarationStore } from './declaration-store.ts';
import { createDeployTasks } from './deploy-tasks.ts';
import { LeaseLost } from './device-lease.ts';
import { type CodedError, codedError } from './device-errors.ts';
import { createOperationLock } from './operation-lock.ts';
import { type StandbyError, standbyRefusal } from './standby-refusal.ts';
import { storedDeclarationText } from './stored-declaration.ts';
import { createOperationRunner, type OperationTask, refusalOf } from './declarative-operations.ts';
import { createTenantDeployer, type DataPlanePort } from './tenant-deployer.ts';
import type { RuleSupport } from './declaration/deploy-rules.ts';

export type { DeployOutcome } from './appsvcs-outcome.ts';
export type { DataPlanePort } from './tenant-deployer.ts';

export type DeployInfo = { version: string; release: string; schemaCurrent: string; schemaMinimum: string };

export type DeclarativeServiceOptions = {
  /** The declaration store, its deployment writes fenced by the active lease. */
  store: DeclarationStore;
  /** The store's database: queued tasks go on its job queue (deploy-tasks.ts). */
  db: Database;
  dataPlane: DataPlanePort;
  /** The device's stored script objects and the rule interpreter, for the rules deployed services run. */
  rules?: RuleSupport;
  /** Whether this process is the active one of its pair (device-pair.ts), and where the active one is. */
  pair: { isActive(): boolean; activeUrl(): string | undefined };
  /** This process's identity as a runner of queued tasks (unique per process start). */
  owner: string;
  /** A queued task claimed by a process that died is taken up again this long after (the device lease's length). */
  leaseMs: number;
  clock: Clock;
  logger: Logger;
  hostname: string;
  info: DeployInfo;
  /** Loads the spec's schemas once (createSpecValidator(document).at): ajv is loaded on the first deployment, not at start. */
  schemas: () => Promise<(pointer: string) => ValidateFunction>;
  /** The device's spec: a large declaration is checked on a worker thread, with validators of its own. */
  document: object;
  timers: Timers;
  /** Bodies over this many bytes are checked on the worker thread (default 64 KiB; 0: every body). */
  inlineCheckBytes?: number;
  newTaskId: () => string;
};

/**
 * Task records kept: the last 100 of queued deployments and, apart, the last 100 of the others (the real
 * extension keeps a bounded history too); the task list shows the last 100 of all.
 */
const KEEP_TASKS = 100;
/** Asynchronous deployments waiting at most; past it a new one is refused busy like a synchronous one. */
const MAX_QUEUED = 100;
/** A check of a declaration past this is a bug (every check is linear in the body; 2 MiB takes about a second): its thread is ended. */
const CHECK_BUDGET_MS = 60_000;

type Task = OperationTask;

/**
 * Declarative deployment on the device (`/mgmt/shared/appsvcs`): one configuration operation at a time, run
 * by the active process of the device pair (device-pair.ts) only. A synchronous deployment or removal that
 * finds the device busy (or deployments queued) is refused (`deploymentBusy`), on a standby process
 * `deviceStandby`. Asynchronous ones are accepted by either process: saved with their job (deploy-tasks.ts)
 * and run by the active one, oldest first, exactly once to completion (a run of a finished task is a no-op).
 * Every operation leaves a task record (appsvcs-outcome.ts). The active process answers reads from what
 * its data plane runs, the standby from the store. Answers are outcomes and registry failures; the
 * handlers (appsvcs-handlers.ts) give them their statuses.
 */
export function createDeclarativeService(options: DeclarativeServiceOptions) {
  const { store, clock, hostname, logger, pair } = options;
  const checker = createDeclarationChecker({
    document: options.document,
    schemas: options.schemas,
    info: options.info,
    timers: options.timers,
    budgetMs: CHECK_BUDGET_MS,
    ...(options.inlineCheckBytes === undefined ? {} : { inlineBytes: options.inlineCheckBytes }),
  });
  // The deployer's writes to the data plane are fenced: a process that stepped down binds nothing more.
  const fencedDataPlane: DataPlanePort = {
    apply: (services) => (pair.isActive() ? options.dataPlane.apply(services) : Promise.reject(new LeaseLost())),
  };
  const tenants = createTenantDeployer({
    store,
    dataPlane: fencedDataPlane,
    clock,
    logger,
    hostname,
    schemaCurrent: options.info.schemaCurrent,
    prepare: (text) => checker.prepare(text),
    ...(options.rules ? { rules: options.rules } : {}),
  });
  const lock = createOperationLock();
  /** Queued requests this process checked already, by task id (run without a second check if it runs them). */
  const checkedRequests = new Map<string, ReadyRequest>();
  /** The deployer holds the running configuration (this process is active and loaded it). */
  let loaded = false;
  let stopped = false;
  let order = 0;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));

  const tasks = createDeployTasks({
    db: options.db,
    clock,
    timers: options.timers,
    logger,
    owner: options.owner,
    leaseMs: options.leaseMs,
    run: runTask,
    giveUp: async (taskId, reason) => {
      logger.error({ task: taskId, reason }, 'a queued declarative deployment was given up');
      checkedRequests.delete(taskId);
      await store.finishTask(taskId, failedRecord(taskId, hostname));
    },
  });

  const nextOrder = () => clock.nowMs() * 1000 + (order++ % 1000);
  const busyAnswer = () => fail(deploymentBusy(hostname));
  const standbyAnswer = () => fail(standbyRefusal(pair.activeUrl()));
  /** The deployed declaration as text; undefined when no tenant is deployed. */
  const deployedDeclaration = () => (tenants.tenants().length === 0 ? undefined : tenants.declarationOf());
  /** Reads answer from the running configuration on the active process, from the store otherwise. */
  const fromMemory = () => loaded && pair.isActive();

  const execute = createOperationRunner({ checker, tenants, store, schemaCurrent: options.info.schemaCurrent });

  /** Runs one synchronous operation (the caller holds the lock) and records it. */
  async function recorded(task: Task): Promise<Outcome> {
    const outcome = await execute(task);
    // The record keeps no request: a finished task needs only its outcome (requests can be megabytes).
    await store.putTask({ id: task.id, order: task.order, state: 'done', request: '{}', record: recordOf(task.id, outcome, hostname) });
    await store.pruneTasks(KEEP_TASKS);
    return outcome;
  }

  /**
   * Runs queued task `taskId` under the lock (the job worker's run): a task finished already (an earlier run
   * recorded it, then its process died) is not run again; its outcome is recorded only while it is `in
   * progress` and this process is active (fenced). Throws when it could not run (tried again, by the next
   * active process if this one stepped down).
   */
  async function runTask(taskId: string, signal: AbortSignal): Promise<void> {
    const release = await lock.acquire();
    try {
      if (signal.aborted || !fromMemory()) throw new LeaseLost();
      const task = await store.getTask(taskId);
      if (!task || task.state === 'done') return;
      const checked = checkedRequests.get(taskId);
      const outcome = await execute({ id: taskId, order: task.order, request: checked ?? { action: 'stored', text: task.request } });
      await store.finishTask(taskId, recordOf(taskId, outcome, hostname));
      checkedRequests.delete(taskId);
      await store.pruneTasks(KEEP_TASKS);
    } finally {
      release();
    }
  }

  /** A synchronous operation: refused on the standby, or when the lock is held or tasks are queued. */
  async function synchronously<T, E>(run: () => Promise<Result<T, E>>): Promise<Result<T, E | BusyError | StandbyError>> {
    if (!pair.isActive()) return standbyAnswer();
    const release = lock.tryAcquire();
    if (!release) return busyAnswer();
    try {
      if (stopped || !fromMemory() || (await store.pendingTasks()) > 0) return busyAnswer();
      return await run();
    } catch (error) {
      // This process stepped down while it ran: nothing of it was saved (the save is fenced).
      if (error instanceof LeaseLost) return standbyAnswer();
      throw error;
    } finally {
      release();
    }
  }

  return {
    info: () => options.info,
    services: () => tenants.services(),

    /**
     * Becomes the active one: loads the saved configuration and starts its services (under the lock), then
     * runs queued tasks, those a stopped or dead process left included.
     */
    async activate() {
      const release = await lock.acquire();
      try {
        tenants.reset();
        await tenants.load();
        loaded = true;
      } finally {
        release();
        markStarted();
      }
      await tasks.start();
    },

    /**
     * No longer the active one: the data plane is emptied at once, the task under way is signalled (its
     * fenced writes fail; it goes back to the queue), and the running configuration is dropped.
     */
    async deactivate() {
      loaded = false;
      await options.dataPlane.apply([]);
      await tasks.stop();
      const release = await lock.acquire();
      try {
        await options.dataPlane.apply([]);
        tenants.reset();
      } finally {
        release();
      }
    },

    /** Answers from now on (a standby process: once its pair has looked at the lease). */
    markReady: () => markStarted(),

    /** Stops taking work and waits for the operation in progress. */
    async stop() {
      stopped = true;
      markStarted();
      await tasks.stop();
      (await lock.acquire())();
      await checker.close();
    },

    /**
     * `POST /declare`, from the body's bytes: parsed, checked and prepared by the checker (on its
     * thread when large), so that no declaration holds the event loop.
     */
    async deploy(
      raw: Uint8Array | undefined,
      query: { async?: boolean; updateMode?: 'selective' | 'complete' },
    ): Promise<Result<DeployOutcome, DeployError | StandbyError>> {
      await started;
      const checkQuery: RequestQuery = query.updateMode ? { updateMode: query.updateMode } : {};
      const checked = await checker.check(raw, checkQuery);
      if (!checked.ok) return fail(refusalOf(checked)!);
      const task: Task = { id: options.newTaskId(), order: nextOrder(), request: checked.request };
      if (query.async) {
        if (stopped || (await store.pendingTasks()) >= MAX_QUEUED) return busyAnswer();
        // Saved as posted, checked again if another process runs it: the text is written, not serialised.
        const bodyText = raw ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : 'null';
        if (pair.isActive()) checkedRequests.set(task.id, checked.request);
        try {
          await tasks.enqueue({
            id: task.id,
            order: task.order,
            request: storedRequestText(bodyText, checkQuery),
            state: 'in progress',
            record: queuedRecord(task.id),
          });
        } catch (error) {
          checkedRequests.delete(task.id);
          throw error;
        }
        return ok({ kind: 'accepted', task: acceptedTask(task.id) });
      }
      return synchronously(async () => deployResult(await recorded(task)));
    },

    /** `DELETE /declare[/<tenants>]`: the result text. */
    async remove(names?: readonly string[]): Promise<Result<string, BusyError | StandbyError>> {
      await started;
      return synchronously(async () => {
        const outcome = await recorded({
          id: options.newTaskId(),
          order: nextOrder(),
          request: { action: 'remove-tenants', tenants: [...(names ?? tenants.tenants())] },
        });
        const removed = deployResult(outcome);
        // A removal binds nothing, so no tenant of it can fail: anything but `done` is a bug.
        if (!removed.ok || removed.value.kind !== 'done') throw new Error(`a removal of tenants ended ${outcome.kind}, not done`);
        return ok(removed.value.json);
      });
    },

    /** `GET /declare`: the deployed declaration's text; undefined when no tenant is deployed. */
    async declaration(): Promise<string | undefined> {
      await started;
      return fromMemory() ? deployedDeclaration() : storedDeclarationText(await store.load(), options.info.schemaCurrent);
    },

    /** `GET /declare/<tenants>`: the declaration of the named tenants, as text. */
    async tenantDeclaration(names: readonly string[]): Promise<Result<string, CodedError<'tenantNotFound'>>> {
      await started;
      const saved = fromMemory() ? undefined : await store.load();
      const known = saved ? new Set(saved.tenants.map(([name]) => name)) : undefined;
      const missing = names.filter((t) => !(known ? known.has(t) : tenants.has(t)));
      if (missing.length > 0)
        return fail(codedError('tenantNotFound', `specified Tenant(s) '${missing.slice(0, 10).join(',')}' not found in declaration`));
      if (!saved) return ok(tenants.declarationOf(new Set(names)));
      return ok(storedDeclarationText(saved, options.info.schemaCurrent, new Set(names))!);
    },

    /** `GET /task`: the task list's text (the records are text already). */
    async listTasks(): Promise<string> {
      return `{"items":[${(await store.listTasks(KEEP_TASKS)).map((t) => t.record).join(',')}]}`;
    },

    /** `GET /task/<id>`: the task record's text. */
    async getTask(id: string): Promise<Result<string, CodedError<'taskNotFound'>>> {
      const task = await store.getTask(id);
      if (!task) return fail(codedError('taskNotFound', `No record found with ID of ${id}`));
      return ok(task.record);
    },
  };
}

export type DeclarativeService = ReturnType<typeof createDeclarativeService>;
