import type { ValidateFunction } from 'ajv';
import type { Clock } from '../../lib/clock.ts';
import { fail, ok, type Result } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import {
  acceptedTask,
  type Applied,
  type BusyError,
  type DeployError,
  type DeployOutcome,
  deployResult,
  deploymentBusy,
  failedRecord,
  invalidRequest,
  malformedRequest,
  type OperationOutcome as Outcome,
  queuedRecord,
  recordOf,
  type RequestError,
} from './appsvcs-outcome.ts';
import { storedRequestText, type CheckedRequest, type ReadyRequest, type RequestQuery } from './declaration/checked-request.ts';
import { createDeclarationChecker } from './declaration/declaration-checker.ts';
import type { PreparedDeclaration, PreparedTenant } from './declaration/prepared.ts';
import type { DeclarationStore, StoredTask } from './declaration-store.ts';
import { type CodedError, codedError } from './device-errors.ts';
import { createTenantDeployer, type DataPlanePort, type HeaderMembers } from './tenant-deployer.ts';

export type { DeployOutcome } from './appsvcs-outcome.ts';
export type { DataPlanePort } from './tenant-deployer.ts';

export type DeployInfo = { version: string; release: string; schemaCurrent: string; schemaMinimum: string };

export type DeclarativeServiceOptions = {
  store: DeclarationStore;
  dataPlane: DataPlanePort;
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

/** Task records kept (the real extension keeps a bounded history too). */
const KEEP_TASKS = 100;
/** Asynchronous deployments waiting at most; past it a new one is refused busy like a synchronous one. */
const MAX_QUEUED = 100;
/** A check of a declaration past this is a bug (every check is linear in the body; 2 MiB takes about a second): its thread is ended. */
const CHECK_BUDGET_MS = 60_000;

/**
 * `request`: checked and prepared, or (a queued deployment read back after a restart) its saved text,
 * checked again when it runs.
 */
type Task = {
  id: string;
  order: number;
  request: ReadyRequest | { action: 'remove-tenants'; tenants: string[] } | { action: 'stored'; text: string };
};

/**
 * Declarative deployment on the device (`/mgmt/shared/appsvcs`): one configuration operation at a
 * time. A synchronous deployment or removal that finds the device busy (or deployments queued) is
 * refused (`deploymentBusy`); asynchronous ones queue, are saved, and run again after a restart.
 * Every operation leaves a task record (appsvcs-outcome.ts). Nothing is answered before the saved
 * configuration is loaded (`start`). Answers are outcomes and registry failures; the handlers
 * (appsvcs-handlers.ts) give them their statuses.
 */
export function createDeclarativeService(options: DeclarativeServiceOptions) {
  const { store, clock, hostname, logger } = options;
  const checker = createDeclarationChecker({
    document: options.document,
    schemas: options.schemas,
    info: options.info,
    timers: options.timers,
    budgetMs: CHECK_BUDGET_MS,
    ...(options.inlineCheckBytes === undefined ? {} : { inlineBytes: options.inlineCheckBytes }),
  });
  const tenants = createTenantDeployer({
    store,
    dataPlane: options.dataPlane,
    clock,
    logger,
    hostname,
    schemaCurrent: options.info.schemaCurrent,
    prepare: (text) => checker.prepare(text),
  });
  let busy = false;
  let stopped = false;
  const queue: Task[] = [];
  let order = 0;
  /** The operation running now, if any (stop waits for it). */
  let current: Promise<unknown> = Promise.resolve();
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));

  const nextOrder = () => clock.nowMs() * 1000 + (order++ % 1000);
  const busyAnswer = () => fail(deploymentBusy(hostname));
  const emptyHeader = (): HeaderMembers =>
    tenants.header() ?? [
      ['class', '"ADC"'],
      ['schemaVersion', JSON.stringify(options.info.schemaCurrent)],
    ];
  /** The refusal of the checker's answer (the body is not JSON, or not a valid request), or undefined. */
  const refusalOf = (checked: CheckedRequest): RequestError | undefined =>
    checked.ok ? undefined : 'malformed' in checked ? malformedRequest() : invalidRequest(checked.errors);
  const applied = async (done: Promise<Applied>): Promise<Outcome> => ({ kind: 'applied', applied: await done });
  /** The deployed declaration as text; undefined when no tenant is deployed. */
  const deployedDeclaration = () => (tenants.tenants().length === 0 ? undefined : tenants.declarationOf());

  async function execute({ request }: Task): Promise<Outcome> {
    switch (request.action) {
      case 'stored': {
        const checked = await checker.checkStored(request.text);
        const refused = refusalOf(checked);
        if (refused) return { kind: 'refused', error: refused };
        return execute({ id: '', order: 0, request: (checked as { request: ReadyRequest }).request });
      }
      case 'remove-tenants':
        return applied(
          tenants.apply(
            request.tenants.map((t): [string, null] => [t, null]),
            emptyHeader(),
            true,
            false,
          ),
        );
      case 'retrieve':
        return { kind: 'retrieved', declaration: deployedDeclaration() };
      case 'redeploy': {
        const previous = await store.history(request.redeployAge);
        const prepared = previous === undefined ? undefined : await checker.prepare(previous);
        if (!prepared?.ok)
          return { kind: 'refused', error: invalidRequest([`/redeployAge: no saved declaration ${request.redeployAge} deployments ago`]) };
        return applied(deploy(prepared.declaration, request.persist, false, 'selective'));
      }
      case 'remove':
        return applied(
          tenants.apply(
            request.declaration!.tenants.map(([t]): [string, null] => [t, null]),
            emptyHeader(),
            request.persist,
            request.dryRun,
          ),
        );
      default:
        return applied(deploy(request.declaration!, request.persist, request.dryRun || request.action === 'dry-run', request.updateMode));
    }
  }

  function deploy(declaration: PreparedDeclaration, persist: boolean, dryRun: boolean, updateMode: 'selective' | 'complete') {
    const named: [string, PreparedTenant | null][] = [...declaration.tenants];
    if (updateMode === 'complete') {
      const declared = new Set(named.map(([name]) => name));
      for (const tenant of tenants.tenants()) if (!declared.has(tenant)) named.push([tenant, null]);
    }
    const header: HeaderMembers = [
      ...declaration.header.filter(([key]) => key !== 'updateMode'),
      ['updateMode', JSON.stringify(updateMode)],
    ];
    return tenants.apply(named, header, persist, dryRun);
  }

  /** Runs one operation under the lock and records it; the lock is free again when it settles. */
  async function locked(task: Task): Promise<Outcome> {
    busy = true;
    const run = (async () => {
      try {
        const outcome = await execute(task);
        // The record keeps no request: a finished task needs only its outcome (requests can be megabytes).
        await store.putTask({ id: task.id, order: task.order, state: 'done', request: '{}', record: recordOf(task.id, outcome, hostname) });
        await store.pruneTasks(KEEP_TASKS);
        return outcome;
      } finally {
        busy = false;
        if (!stopped) queueMicrotask(runQueued);
      }
    })();
    current = run.catch(() => undefined);
    return run;
  }

  /** Starts the next queued deployment, if the lock is free; its failure is recorded and logged, never thrown. */
  function runQueued() {
    if (busy || stopped) return;
    const task = queue.shift();
    if (!task) return;
    locked(task).catch(async (error: unknown) => {
      logger.error({ err: error, task: task.id }, 'declarative deployment task failed');
      const record = failedRecord(task.id, hostname);
      await store
        .putTask({ id: task.id, order: task.order, state: 'done', request: '{}', record })
        .catch((e: unknown) => logger.error({ err: e, task: task.id }, 'the failed task could not be recorded'));
    });
  }

  return {
    info: () => options.info,
    services: () => tenants.services(),

    /** Loads the saved configuration, starts its services, and queues the tasks a restart cut off. */
    async start() {
      busy = true;
      try {
        await tenants.load();
        const pending = (await store.listTasks(KEEP_TASKS + MAX_QUEUED)).filter((t) => t.state === 'in progress').reverse();
        order = pending.length;
        queue.push(...pending.map((t: StoredTask): Task => ({ id: t.id, order: t.order, request: { action: 'stored', text: t.request } })));
      } finally {
        busy = false;
        markStarted();
      }
      runQueued();
    },

    /** Stops taking queued work and waits for the operation in progress. */
    async stop() {
      stopped = true;
      markStarted();
      await checker.close();
      await current;
    },

    /**
     * `POST /declare`, from the body's bytes: parsed, checked and prepared by the checker (on its
     * thread when large), so that no declaration holds the event loop.
     */
    async deploy(
      raw: Uint8Array | undefined,
      query: { async?: boolean; updateMode?: 'selective' | 'complete' },
    ): Promise<Result<DeployOutcome, DeployError>> {
      await started;
      const checkQuery: RequestQuery = query.updateMode ? { updateMode: query.updateMode } : {};
      const checked = await checker.check(raw, checkQuery);
      if (!checked.ok) return fail(refusalOf(checked)!);
      const task: Task = { id: options.newTaskId(), order: nextOrder(), request: checked.request };
      if (query.async) {
        if (queue.length >= MAX_QUEUED || stopped) return busyAnswer();
        // Saved as posted, checked again if a restart finds it queued: the text is written, not serialised.
        const bodyText = raw ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : 'null';
        await store.putTask({
          id: task.id,
          order: task.order,
          request: storedRequestText(bodyText, checkQuery),
          state: 'in progress',
          record: queuedRecord(task.id),
        });
        queue.push(task);
        runQueued();
        return ok({ kind: 'accepted', task: acceptedTask(task.id) });
      }
      if (busy || queue.length > 0 || stopped) return busyAnswer();
      return deployResult(await locked(task));
    },

    /** `DELETE /declare[/<tenants>]`: the result text. */
    async remove(names?: readonly string[]): Promise<Result<string, BusyError>> {
      await started;
      if (busy || queue.length > 0 || stopped) return busyAnswer();
      const outcome = await locked({
        id: options.newTaskId(),
        order: nextOrder(),
        request: { action: 'remove-tenants', tenants: [...(names ?? tenants.tenants())] },
      });
      const removed = deployResult(outcome);
      // A removal binds nothing, so no tenant of it can fail: anything but `done` is a bug.
      if (!removed.ok || removed.value.kind !== 'done') throw new Error(`a removal of tenants ended ${outcome.kind}, not done`);
      return ok(removed.value.json);
    },

    /** `GET /declare`: the deployed declaration's text; undefined when no tenant is deployed. */
    async declaration(): Promise<string | undefined> {
      await started;
      return deployedDeclaration();
    },

    /** `GET /declare/<tenants>`: the declaration of the named tenants, as text. */
    async tenantDeclaration(names: readonly string[]): Promise<Result<string, CodedError<'tenantNotFound'>>> {
      await started;
      const missing = names.filter((t) => !tenants.has(t));
      if (missing.length > 0)
        return fail(codedError('tenantNotFound', `specified Tenant(s) '${missing.slice(0, 10).join(',')}' not found in declaration`));
      return ok(tenants.declarationOf(new Set(names)));
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
