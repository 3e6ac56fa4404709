import type { ValidateFunction } from 'ajv';
import { portolanError } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Timers } from '../../lib/timers.ts';
import { storedRequestText, type CheckedRequest, type ReadyRequest, type RequestQuery } from './declaration/checked-request.ts';
import { createDeclarationChecker } from './declaration/declaration-checker.ts';
import { objectText } from './declaration/json-text.ts';
import type { PreparedDeclaration, PreparedTenant } from './declaration/prepared.ts';
import type { DeclarationStore, StoredTask } from './declaration-store.ts';
import { renderDeviceError } from './error-shape.ts';
import { appsvcsFailure, createTenantDeployer, type Answer, type DataPlanePort, type HeaderMembers } from './tenant-deployer.ts';

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
 * time. A synchronous deployment or removal that finds the device busy (or deployments queued) gets
 * 503; asynchronous ones queue, are saved, and run again after a restart. Every operation leaves a
 * task record. Nothing is answered before the saved configuration is loaded (`start`).
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
  const selfLink = (id: string) => `https://localhost/mgmt/shared/appsvcs/task/${id}`;
  const busyAnswer = () =>
    appsvcsFailure('deploymentBusy', `Configuration operation in progress on device ${hostname}, please try again in 2 minutes`);
  const invalid = (errors: string[]) => appsvcsFailure('declarationInvalid', undefined, { errors });
  const emptyHeader = (): HeaderMembers =>
    tenants.header() ?? [
      ['class', '"ADC"'],
      ['schemaVersion', JSON.stringify(options.info.schemaCurrent)],
    ];
  /** A failure of the checker's answer (the body is not JSON, or not a valid request), or undefined. */
  const refusalOf = (checked: CheckedRequest): Answer | undefined =>
    checked.ok ? undefined : 'malformed' in checked ? { status: 400, body: MALFORMED_ANSWER } : invalid(checked.errors);

  async function execute({ request }: Task): Promise<Answer> {
    switch (request.action) {
      case 'stored': {
        const checked = await checker.checkStored(request.text);
        return refusalOf(checked) ?? execute({ id: '', order: 0, request: (checked as { request: ReadyRequest }).request });
      }
      case 'remove-tenants':
        return tenants.apply(
          request.tenants.map((t): [string, null] => [t, null]),
          emptyHeader(),
          true,
          false,
        );
      case 'retrieve':
        return tenants.tenants().length === 0 ? { status: 204 } : declarationAnswer(tenants.declarationOf());
      case 'redeploy': {
        const previous = await store.history(request.redeployAge);
        const prepared = previous === undefined ? undefined : await checker.prepare(previous);
        if (!prepared?.ok) return invalid([`/redeployAge: no saved declaration ${request.redeployAge} deployments ago`]);
        return deploy(prepared.declaration, request.persist, false, 'selective');
      }
      case 'remove':
        return tenants.apply(
          request.declaration!.tenants.map(([t]): [string, null] => [t, null]),
          emptyHeader(),
          request.persist,
          request.dryRun,
        );
      default:
        return deploy(request.declaration!, request.persist, request.dryRun || request.action === 'dry-run', request.updateMode);
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

  /** The record of a finished operation, as `GET /task/<id>` shows it. */
  function recordOf(task: Task, answer: Answer): string {
    const body = answer.body as { results?: unknown[]; message?: string } | undefined;
    const retrieved = task.request.action === 'retrieve';
    const results = body?.results ?? [
      {
        code: answer.status === 204 || retrieved ? 200 : answer.status,
        message: answer.status < 300 ? 'success' : (body?.message ?? 'declaration failed'),
        host: hostname,
      },
    ];
    return recordText(task.id, results, answer.declaration ?? '{}');
  }

  /** A task record as JSON text: the declaration it names is text already. */
  const recordText = (id: string, results: readonly unknown[], declaration = '{}') =>
    objectText([
      ['id', JSON.stringify(id)],
      ['results', JSON.stringify(results)],
      ['declaration', declaration],
      ['selfLink', JSON.stringify(selfLink(id))],
    ]);

  /** Runs one operation under the lock and records it; the lock is free again when it settles. */
  async function locked(task: Task): Promise<Answer> {
    busy = true;
    const run = (async () => {
      try {
        const answer = await execute(task);
        // The record keeps no request: a finished task needs only its answer (requests can be megabytes).
        await store.putTask({ id: task.id, order: task.order, state: 'done', request: '{}', record: recordOf(task, answer) });
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
      const record = recordText(task.id, [{ code: 500, message: 'declaration failed', host: hostname }]);
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
    async deploy(raw: Uint8Array | undefined, query: { async?: boolean; updateMode?: 'selective' | 'complete' }): Promise<Answer> {
      await started;
      const checkQuery: RequestQuery = query.updateMode ? { updateMode: query.updateMode } : {};
      const checked = await checker.check(raw, checkQuery);
      if (!checked.ok) return refusalOf(checked)!;
      const task: Task = { id: options.newTaskId(), order: nextOrder(), request: checked.request };
      if (query.async) {
        if (queue.length >= MAX_QUEUED || stopped) return busyAnswer();
        const accepted = [{ code: 0, message: 'Declaration successfully submitted' }];
        // Saved as posted, checked again if a restart finds it queued: the text is written, not serialised.
        const bodyText = raw ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : 'null';
        await store.putTask({
          id: task.id,
          order: task.order,
          request: storedRequestText(bodyText, checkQuery),
          state: 'in progress',
          record: recordText(task.id, IN_PROGRESS),
        });
        queue.push(task);
        runQueued();
        return { status: 202, body: { id: task.id, results: accepted, declaration: {}, selfLink: selfLink(task.id) } };
      }
      if (busy || queue.length > 0 || stopped) return busyAnswer();
      return locked(task);
    },

    /** `DELETE /declare[/<tenants>]`. */
    async remove(names?: readonly string[]): Promise<Answer> {
      await started;
      if (busy || queue.length > 0 || stopped) return busyAnswer();
      return locked({
        id: options.newTaskId(),
        order: nextOrder(),
        request: { action: 'remove-tenants', tenants: [...(names ?? tenants.tenants())] },
      });
    },

    /** `GET /declare[/<tenants>]`. */
    async read(names?: readonly string[]): Promise<Answer> {
      await started;
      if (!names) return tenants.tenants().length === 0 ? { status: 204 } : declarationAnswer(tenants.declarationOf());
      const missing = names.filter((t) => !tenants.has(t));
      if (missing.length > 0)
        return appsvcsFailure('tenantNotFound', `specified Tenant(s) '${missing.slice(0, 10).join(',')}' not found in declaration`);
      return declarationAnswer(tenants.declarationOf(new Set(names)));
    },

    async listTasks(): Promise<Answer> {
      return { status: 200, json: `{"items":[${(await store.listTasks(KEEP_TASKS)).map((t) => t.record).join(',')}]}` };
    },

    async getTask(id: string): Promise<Answer> {
      const task = await store.getTask(id);
      if (!task) return appsvcsFailure('taskNotFound', `No record found with ID of ${id}`);
      return { status: 200, json: task.record };
    },
  };
}

/** The answer to a read: the declaration's text, which a `retrieve` task's record keeps too. */
const declarationAnswer = (text: string): Answer => ({ status: 200, json: text, declaration: text });

/** A body that is not JSON: the device REST's answer (error-shape.ts), as the adapter gives it to any other operation. */
const MALFORMED_ANSWER = renderDeviceError(portolanError('malformedBody'), { headers: {} }).body;

export type DeclarativeService = ReturnType<typeof createDeclarativeService>;
