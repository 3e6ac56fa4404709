import type { ValidateFunction } from 'ajv';
import type { Clock } from '../../lib/clock.ts';
import { ERROR_CODES } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { findAddressConflicts } from './declaration/conflicts.ts';
import { planTenant, type ServicePlan, type TenantPlan } from './declaration/plan.ts';
import { readDeployRequest, type DeployRequest } from './declaration/request.ts';
import { isSameTenant } from './declaration/same-tenant.ts';
import type { DeclarationHeader, DeclarationStore, TaskRow, TenantChange } from './declaration-store.ts';

/** What the declarative service answers: a status and a body in the appsvcs shapes. */
export type Answer = { status: number; body?: unknown };

/** The data plane the deployed services run on (src/traffic/data-plane.ts). */
export type DataPlanePort = {
  apply(services: readonly ServicePlan[]): Promise<{ ok: true } | { ok: false; failures: readonly { key: string; address: string; port: number; reason: string }[] }>;
};

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
  newTaskId: () => string;
};

type TenantResult = {
  code: number;
  message: string;
  response?: string;
  lineCount?: number;
  host: string;
  tenant?: string;
  runTime: number;
  warnings?: string[];
};

type Running = { plan: TenantPlan };

const KEEP_TASKS = 100;

type AppsvcsCode = 'declarationInvalid' | 'declarationFailed' | 'deploymentBusy' | 'taskNotFound' | 'tenantNotFound';

/** An appsvcs failure `{code, message, ...}`: the registry's status (src/lib/errors.ts), the real product's message. */
const failure = (code: AppsvcsCode, message: string = ERROR_CODES[code].message, extra: Record<string, unknown> = {}): Answer => ({
  status: ERROR_CODES[code].status,
  body: { code: ERROR_CODES[code].status, message, ...extra },
});
const IN_PROGRESS = [{ code: 0, message: 'in progress' }];
const TENANT_MEMBER = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { class?: unknown }).class === 'Tenant';
const isApplication = (value: unknown) => typeof value === 'object' && value !== null && (value as { class?: unknown }).class === 'Application';

/** A declaration's own fields: everything that is not a tenant. */
const headerOf = (declaration: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(declaration).filter(([, value]) => !TENANT_MEMBER(value)));

const tenantsOf = (declaration: Readonly<Record<string, unknown>>): [string, Record<string, unknown>][] =>
  Object.entries(declaration).filter((entry): entry is [string, Record<string, unknown>] => TENANT_MEMBER(entry[1]));

/**
 * Declarative deployment on the device (`/mgmt/shared/appsvcs`): reads a deployment, replaces each
 * tenant it names whole (seed), runs the tenants' services on the data plane, saves them in one
 * transaction, and keeps a record of every deployment. One deployment runs at a time: a synchronous one
 * that finds the device busy gets 503; asynchronous ones queue, saved, and run again after a restart.
 */
export function createDeclarativeService(options: DeclarativeServiceOptions) {
  const { store, dataPlane, clock, hostname } = options;
  const running = new Map<string, Running>();
  let header: DeclarationHeader | undefined;
  let busy = false;
  const queue: TaskRow[] = [];
  let order = 0;
  let drained: Promise<void> = Promise.resolve();
  let stopped = false;

  const nextOrder = () => clock.nowMs() * 1000 + (order++ % 1000);
  const historyId = () => `${String(clock.nowMs()).padStart(15, '0')}-${String(order++ % 1_000_000).padStart(6, '0')}`;
  const selfLink = (id: string) => `https://localhost/mgmt/shared/appsvcs/task/${id}`;
  const allServices = (tenants: ReadonlyMap<string, Running>) => [...tenants.values()].flatMap((r) => r.plan.services);
  const busyAnswer = () => failure('deploymentBusy', `Configuration operation in progress on device ${hostname}, please try again in 2 minutes`);

  /** The declaration as deployed, restricted to `names` (all tenants when undefined). */
  function declarationOf(names?: readonly string[]): Record<string, unknown> {
    const out: Record<string, unknown> = { ...(header ?? { class: 'ADC', schemaVersion: options.info.schemaCurrent }) };
    for (const [name, entry] of running) if (!names || names.includes(name)) out[name] = entry.plan.declaration;
    return out;
  }

  /** Replaces the named tenants (null: remove). The heart of a deployment; runs under the lock. */
  async function applyTenants(named: readonly [string, Record<string, unknown> | null][], nextHeader: DeclarationHeader, persist: boolean, dryRun: boolean) {
    const results = new Map<string, TenantResult>();
    const started = clock.nowMs();
    const result = (tenant: string, fields: Omit<TenantResult, 'host' | 'tenant' | 'runTime'>) =>
      results.set(tenant, { ...fields, host: hostname, tenant, runTime: clock.nowMs() - started });
    const failed = (tenant: string, response: string) => result(tenant, { code: 422, message: 'declaration failed', response });

    const changes = new Map<string, TenantPlan | null>();
    for (const [tenant, declaration] of named) {
      if (declaration === null || !Object.values(declaration).some(isApplication)) {
        if (running.has(tenant)) changes.set(tenant, null);
        else result(tenant, { code: 200, message: 'no change' });
        continue;
      }
      const planned = planTenant(tenant, declaration, { deployed: running });
      if (!planned.ok) {
        failed(tenant, planned.message);
        continue;
      }
      const current = running.get(tenant);
      if (current && isSameTenant(current.plan.declaration, planned.plan.declaration)) {
        result(tenant, { code: 200, message: 'no change', lineCount: planned.plan.lineCount, ...warningsOf(planned.plan) });
      } else {
        changes.set(tenant, planned.plan);
      }
    }
    const kept = [...running.values()].filter((r) => !changes.has(r.plan.tenant)).map((r) => r.plan);
    const conflicts = findAddressConflicts([...changes.values()].filter((p): p is TenantPlan => p !== null), kept);
    for (const [tenant, message] of conflicts) {
      changes.delete(tenant);
      failed(tenant, message);
    }

    if (!dryRun && changes.size > 0) {
      const next = new Map(running);
      for (const [tenant, plan] of changes) (plan ? next.set(tenant, { plan }) : next.delete(tenant));
      let applied = await dataPlane.apply(allServices(next));
      if (!applied.ok) {
        // The tenants whose listeners could not be bound fail; the others are tried again without them.
        const failing = new Set(applied.failures.map((f) => f.key.split('/')[1]!));
        for (const failure of applied.failures) {
          const tenant = failure.key.split('/')[1]!;
          if (changes.has(tenant)) failed(tenant, `${failure.key}: cannot listen on ${failure.address} port ${failure.port}: ${failure.reason}`);
        }
        for (const tenant of failing) {
          changes.delete(tenant);
          const old = running.get(tenant);
          if (old) next.set(tenant, old);
          else next.delete(tenant);
        }
        applied = await dataPlane.apply(allServices(next));
        if (!applied.ok) {
          for (const tenant of changes.keys()) failed(tenant, 'the data plane could not start the services');
          changes.clear();
          await dataPlane.apply(allServices(running));
        }
      }
      if (changes.size > 0) {
        const stored: TenantChange[] = [...changes].map(([tenant, plan]) => ({ tenant, declaration: plan ? plan.declaration : null }));
        const after = new Map(running);
        for (const [tenant, plan] of changes) (plan ? after.set(tenant, { plan }) : after.delete(tenant));
        if (persist) {
          const full = { ...nextHeader, ...Object.fromEntries([...after].map(([name, r]) => [name, r.plan.declaration])) };
          try {
            await store.save(nextHeader, stored, full, clock.nowMs(), historyId());
          } catch (error) {
            await dataPlane.apply(allServices(running));
            throw error;
          }
        }
        running.clear();
        for (const [tenant, entry] of after) running.set(tenant, entry);
        header = nextHeader;
      }
    }
    for (const [tenant, plan] of changes) {
      result(tenant, { code: 200, message: 'success', ...(plan ? { lineCount: plan.lineCount, ...warningsOf(plan) } : {}) });
    }
    if (dryRun && changes.size === 0 && results.size === 0) results.set('', { code: 200, message: 'no change', host: hostname, runTime: 0 });
    const ordered = named.map(([tenant]) => results.get(tenant)!).filter(Boolean);
    if (ordered.length === 0) ordered.push({ code: 200, message: 'no change', host: hostname, runTime: clock.nowMs() - started });
    const okCount = ordered.filter((r) => r.code === 200).length;
    const status = okCount === ordered.length ? 200 : okCount === 0 ? 422 : 207;
    const body: Record<string, unknown> = {
      ...(status === 422 ? (failure('declarationFailed').body as object) : {}),
      results: ordered.map(({ tenant, ...rest }) => (tenant ? { ...rest, tenant } : rest)),
      declaration: declarationOf(named.map(([tenant]) => tenant)),
      ...(dryRun ? { dryRun: true } : {}),
    };
    return { status, body };
  }

  const warningsOf = (plan: TenantPlan) => (plan.warnings.length > 0 ? { warnings: [...plan.warnings] } : {});

  /** Runs one read request (under the lock). */
  async function execute(request: DeployRequest): Promise<Answer> {
    switch (request.action) {
      case 'retrieve':
        return running.size === 0 ? { status: 204 } : { status: 200, body: declarationOf() };
      case 'redeploy': {
        const previous = await store.history(request.redeployAge);
        if (!previous) return invalid([`/redeployAge: no saved declaration ${request.redeployAge} deployments ago`]);
        return deployDeclaration(previous, request.persist, false, 'selective');
      }
      case 'remove': {
        const named = tenantsOf(request.declaration!).map(([tenant]): [string, null] => [tenant, null]);
        return applyTenants(named, header ?? headerOf(request.declaration!), request.persist, request.dryRun);
      }
      default:
        return deployDeclaration(request.declaration!, request.persist, request.dryRun || request.action === 'dry-run', request.updateMode);
    }
  }

  function deployDeclaration(declaration: Readonly<Record<string, unknown>>, persist: boolean, dryRun: boolean, updateMode: 'selective' | 'complete') {
    const named: [string, Record<string, unknown> | null][] = tenantsOf(declaration);
    if (updateMode === 'complete') {
      for (const tenant of running.keys()) if (!named.some(([name]) => name === tenant)) named.push([tenant, null]);
    }
    return applyTenants(named, { ...headerOf(declaration), updateMode }, persist, dryRun);
  }

  const invalid = (errors: string[]) => failure('declarationInvalid', undefined, { errors });

  /** Runs `work` under the lock and records it as a task; the lock is free again when it settles. */
  async function locked(task: { id: string; order: number; request: unknown }, work: () => Promise<Answer>): Promise<Answer> {
    busy = true;
    try {
      const answer = await work();
      const record = { id: task.id, results: resultsOf(answer), declaration: declarationIn(answer), selfLink: selfLink(task.id) };
      await store.putTask({ id: task.id, order: task.order, state: 'done', request: task.request, record });
      await store.pruneTasks(KEEP_TASKS);
      return answer;
    } finally {
      busy = false;
      drained = drainQueue();
    }
  }

  const resultsOf = (answer: Answer) => {
    const body = answer.body as { results?: unknown[]; code?: number; message?: string; errors?: unknown } | undefined;
    if (body?.results) return body.results;
    if (answer.status === 204) return [{ code: 200, message: 'no change', host: hostname }];
    return [{ code: answer.status, message: body?.message ?? 'declaration failed', host: hostname }];
  };
  const declarationIn = (answer: Answer) => ((answer.body as { declaration?: unknown } | undefined)?.declaration ?? {});

  async function drainQueue(): Promise<void> {
    if (busy || stopped) return;
    const task = queue.shift();
    if (!task) return;
    const read = task.request as DeployRequest;
    await locked(task, () => execute(read)).catch((error: unknown) => {
      options.logger.error({ err: error, task: task.id }, 'declarative deployment task failed');
      return store.putTask({ ...task, state: 'done', record: { id: task.id, results: [{ code: 500, message: 'declaration failed', host: hostname }], declaration: {}, selfLink: selfLink(task.id) } });
    });
  }

  return {
    info: () => options.info,

    /** Loads the saved configuration, starts its services, and queues tasks a restart cut off. */
    async start() {
      const saved = await store.load();
      header = saved.header;
      for (const [tenant, declaration] of saved.tenants) {
        const planned = planTenant(tenant, declaration as Record<string, unknown>, { deployed: new Map() });
        if (planned.ok) running.set(tenant, { plan: planned.plan });
        else options.logger.error({ tenant }, 'a saved tenant no longer plans; it is kept but serves nothing');
      }
      const applied = await dataPlane.apply(allServices(running));
      if (!applied.ok) options.logger.error({ failures: applied.failures }, 'some saved services could not listen');
      const pending = (await store.listTasks(KEEP_TASKS)).filter((t) => t.state === 'in progress').reverse();
      order = pending.length;
      queue.push(...pending);
      drained = drainQueue();
    },

    async stop() {
      stopped = true;
      await drained;
    },

    /** `POST /declare`. */
    async deploy(body: unknown, query: { async?: boolean; updateMode?: 'selective' | 'complete' }): Promise<Answer> {
      const read = readDeployRequest(body, await options.schemas(), options.info, query.updateMode ? { updateMode: query.updateMode } : {});
      if (!read.ok) return invalid(read.errors);
      const task = { id: options.newTaskId(), order: nextOrder(), request: read.request };
      if (query.async) {
        const record = { id: task.id, results: [{ code: 0, message: 'Declaration successfully submitted' }], declaration: {}, selfLink: selfLink(task.id) };
        await store.putTask({ ...task, state: 'in progress', record: { ...record, results: IN_PROGRESS } });
        queue.push({ ...task, state: 'in progress', record });
        drained = drainQueue();
        return { status: 202, body: record };
      }
      if (busy || queue.length > 0) return busyAnswer();
      return locked(task, () => execute(read.request));
    },

    /** `DELETE /declare[/<tenants>]`. */
    async remove(tenants?: readonly string[]): Promise<Answer> {
      if (busy || queue.length > 0) return busyAnswer();
      const names = tenants ?? [...running.keys()];
      const task = { id: options.newTaskId(), order: nextOrder(), request: { action: 'remove', tenants: names } };
      return locked(task, () => applyTenants(names.map((t): [string, null] => [t, null]), header ?? { class: 'ADC', schemaVersion: options.info.schemaCurrent }, true, false));
    },

    /** `GET /declare[/<tenants>]`. */
    read(tenants?: readonly string[]): Answer {
      if (!tenants) return running.size === 0 ? { status: 204 } : { status: 200, body: declarationOf() };
      const missing = tenants.filter((t) => !running.has(t));
      if (missing.length > 0) return failure('tenantNotFound', `specified Tenant(s) '${missing.slice(0, 10).join(',')}' not found in declaration`);
      return { status: 200, body: declarationOf(tenants) };
    },

    async listTasks(): Promise<Answer> {
      return { status: 200, body: { items: (await store.listTasks(KEEP_TASKS)).map((t) => t.record) } };
    },

    async getTask(id: string): Promise<Answer> {
      const task = await store.getTask(id);
      if (!task) return failure('taskNotFound', `No record found with ID of ${id}`);
      return { status: 200, body: task.record };
    },

    /** Services as the data plane should run them now (for status pages and tests). */
    services: () => allServices(running),
  };
}

export type DeclarativeService = ReturnType<typeof createDeclarativeService>;
