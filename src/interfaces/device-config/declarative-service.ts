import type { ValidateFunction } from 'ajv';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import type { PlanOutcome } from './declaration/checked-request.ts';
import { createDeclarationChecker } from './declaration/declaration-checker.ts';
import { declarationWithDefaults } from './declaration/defaults.ts';
import { isRecord, own } from './declaration/model.ts';
import type { DeployRequest } from './declaration/request.ts';
import type { DeclarationStore, TaskRow } from './declaration-store.ts';
import { appsvcsFailure, createTenantDeployer, headerOf, tenantsOf, type Answer, type DataPlanePort } from './tenant-deployer.ts';

export type { Answer, DataPlanePort } from './tenant-deployer.ts';

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
/** Asynchronous deployments waiting at most; past it a new one gets 503 like a synchronous one. */
const MAX_QUEUED = 100;
const IN_PROGRESS = [{ code: 0, message: 'in progress' }];
/** A check of a declaration past this is a bug (every check is linear in the body; 2 MiB takes about a second): its thread is ended. */
const CHECK_BUDGET_MS = 60_000;

/** `plans`: the tenants of the request planned when it was checked (a task run again after a restart plans them then). */
type Task = { id: string; order: number; request: DeployRequest | { action: 'remove-tenants'; tenants: string[] }; plans?: ReadonlyMap<string, PlanOutcome> };

/**
 * Declarative deployment on the device (`/mgmt/shared/appsvcs`): one configuration operation at a
 * time. A synchronous deployment or removal that finds the device busy (or deployments queued) gets
 * 503; asynchronous ones queue, are saved, and run again after a restart. Every operation leaves a
 * task record. Nothing is answered before the saved configuration is loaded (`start`).
 */
export function createDeclarativeService(options: DeclarativeServiceOptions) {
  const { store, clock, hostname, logger } = options;
  const tenants = createTenantDeployer({ store, dataPlane: options.dataPlane, clock, logger, hostname, schemaCurrent: options.info.schemaCurrent });
  const checker = createDeclarationChecker({
    document: options.document,
    schemas: options.schemas,
    info: options.info,
    timers: options.timers,
    budgetMs: CHECK_BUDGET_MS,
    ...(options.inlineCheckBytes === undefined ? {} : { inlineBytes: options.inlineCheckBytes }),
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
  const selfLink = (id: string) => `https://localhost/mgmt/shared/appsvcs/task/${id}`;
  const busyAnswer = () => appsvcsFailure('deploymentBusy', `Configuration operation in progress on device ${hostname}, please try again in 2 minutes`);
  const invalid = (errors: string[]) => appsvcsFailure('declarationInvalid', undefined, { errors });
  const emptyHeader = () => tenants.header() ?? { class: 'ADC', schemaVersion: options.info.schemaCurrent };

  async function execute({ request, plans }: Task): Promise<Answer> {
    switch (request.action) {
      case 'remove-tenants':
        return tenants.apply(request.tenants.map((t): [string, null] => [t, null]), emptyHeader(), true, false);
      case 'retrieve':
        return tenants.tenants().length === 0 ? { status: 204 } : { status: 200, body: tenants.declarationOf() };
      case 'redeploy': {
        const previous = await store.history(request.redeployAge);
        if (!previous) return invalid([`/redeployAge: no saved declaration ${request.redeployAge} deployments ago`]);
        return deploy(previous, request.persist, false, 'selective');
      }
      case 'remove':
        return tenants.apply(tenantsOf(request.declaration!).map(([t]): [string, null] => [t, null]), emptyHeader(), request.persist, request.dryRun);
      default:
        return deploy(request.declaration!, request.persist, request.dryRun || request.action === 'dry-run', request.updateMode, plans);
    }
  }

  function deploy(declaration: Readonly<Record<string, unknown>>, persist: boolean, dryRun: boolean, updateMode: 'selective' | 'complete', plans?: ReadonlyMap<string, PlanOutcome>) {
    const named: [string, Record<string, unknown> | null][] = tenantsOf(declaration);
    if (updateMode === 'complete') {
      const declared = new Set(named.map(([name]) => name));
      for (const tenant of tenants.tenants()) if (!declared.has(tenant)) named.push([tenant, null]);
    }
    return tenants.apply(named, { ...headerOf(declaration), updateMode }, persist, dryRun, plans);
  }

  /** The record of a finished operation, as `GET /task/<id>` shows it. */
  function recordOf(task: Task, answer: Answer) {
    const body = answer.body as { results?: unknown[]; message?: string; declaration?: unknown; class?: unknown } | undefined;
    const retrieved = task.request.action === 'retrieve';
    const results = body?.results ?? [{ code: answer.status === 204 || retrieved ? 200 : answer.status, message: answer.status < 300 ? 'success' : (body?.message ?? 'declaration failed'), host: hostname }];
    const declaration = retrieved ? (body ?? {}) : (body?.declaration ?? {});
    return { id: task.id, results, declaration, selfLink: selfLink(task.id) };
  }

  /** Runs one operation under the lock and records it; the lock is free again when it settles. */
  async function locked(task: Task): Promise<Answer> {
    busy = true;
    const run = (async () => {
      try {
        const answer = await execute(task);
        // The record keeps no request: a finished task needs only its answer (requests can be megabytes).
        await store.putTask({ id: task.id, order: task.order, state: 'done', request: {}, record: recordOf(task, answer) });
        await store.pruneTasks(KEEP_TASKS);
        return answer;
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
      const record = { id: task.id, results: [{ code: 500, message: 'declaration failed', host: hostname }], declaration: {}, selfLink: selfLink(task.id) };
      await store.putTask({ id: task.id, order: task.order, state: 'done', request: {}, record }).catch((e: unknown) => logger.error({ err: e, task: task.id }, 'the failed task could not be recorded'));
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
        queue.push(...pending.map((t: TaskRow) => ({ id: t.id, order: t.order, request: t.request as DeployRequest })));
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
     * `POST /declare`. `raw`: the bytes `body` was parsed from; a large body is checked and planned
     * from them on the checker's thread, so that no declaration holds the event loop.
     */
    async deploy(body: unknown, query: { async?: boolean; updateMode?: 'selective' | 'complete' }, raw?: Uint8Array): Promise<Answer> {
      await started;
      const checked = await checker.check(body, raw, query.updateMode ? { updateMode: query.updateMode } : {});
      if (!checked.ok) return invalid(checked.errors);
      const task: Task = { id: options.newTaskId(), order: nextOrder(), request: withDeclaration(checked.request, body), plans: new Map(checked.plans) };
      if (query.async) {
        if (queue.length >= MAX_QUEUED || stopped) return busyAnswer();
        const record = { id: task.id, results: [{ code: 0, message: 'Declaration successfully submitted' }], declaration: {}, selfLink: selfLink(task.id) };
        await store.putTask({ id: task.id, order: task.order, request: task.request, state: 'in progress', record: { ...record, results: IN_PROGRESS } });
        queue.push(task);
        runQueued();
        return { status: 202, body: record };
      }
      if (busy || queue.length > 0 || stopped) return busyAnswer();
      return locked(task);
    },

    /** `DELETE /declare[/<tenants>]`. */
    async remove(names?: readonly string[]): Promise<Answer> {
      await started;
      if (busy || queue.length > 0 || stopped) return busyAnswer();
      return locked({ id: options.newTaskId(), order: nextOrder(), request: { action: 'remove-tenants', tenants: [...(names ?? tenants.tenants())] } });
    },

    /** `GET /declare[/<tenants>]`. */
    async read(names?: readonly string[]): Promise<Answer> {
      await started;
      if (!names) return tenants.tenants().length === 0 ? { status: 204 } : { status: 200, body: tenants.declarationOf() };
      const missing = names.filter((t) => !tenants.has(t));
      if (missing.length > 0) return appsvcsFailure('tenantNotFound', `specified Tenant(s) '${missing.slice(0, 10).join(',')}' not found in declaration`);
      return { status: 200, body: tenants.declarationOf(new Set(names)) };
    },

    async listTasks(): Promise<Answer> {
      return { status: 200, body: { items: (await store.listTasks(KEEP_TASKS)).map((t) => t.record) } };
    },

    async getTask(id: string): Promise<Answer> {
      const task = await store.getTask(id);
      if (!task) return appsvcsFailure('taskNotFound', `No record found with ID of ${id}`);
      return { status: 200, body: task.record };
    },
  };
}

/**
 * The checked request with the declaration of `body` (valid: checked), its defaults written in. The
 * checker's thread sends no declaration back: this thread parsed the same one already.
 */
function withDeclaration(request: Omit<DeployRequest, 'declaration'>, body: unknown): DeployRequest {
  const declaration = isRecord(body) && own(body, 'class') === 'AS3' ? own(body, 'declaration') : body;
  return isRecord(declaration) ? { ...request, declaration: declarationWithDefaults(declaration) as DeployRequest['declaration'] } : request;
}

export type DeclarativeService = ReturnType<typeof createDeclarativeService>;
