import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import { ERROR_CODES } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PlanOutcome } from './declaration/checked-request.ts';
import { findAddressConflicts } from './declaration/conflicts.ts';
import { tenantWithDefaults } from './declaration/defaults.ts';
import { planTenant, type PlanResult, type ServicePlan, type TenantPlan } from './declaration/plan.ts';
import { isSameTenant } from './declaration/same-tenant.ts';
import type { DeclarationHeader, DeclarationStore, TenantChange } from './declaration-store.ts';

/** What the declarative service answers: a status and a body in the appsvcs shapes. */
export type Answer = { status: number; body?: unknown };

/** The data plane the deployed services run on (src/traffic/data-plane.ts). */
export type DataPlanePort = {
  apply(services: readonly ServicePlan[]): Promise<{ ok: true } | { ok: false; failures: readonly { key: string; address: string; port: number; reason: string }[] }>;
};

type TenantResult = { code: number; message: string; response?: string; lineCount?: number; host: string; tenant?: string; runTime: number; warnings?: string[] };

/** A deployed tenant: its plan, and whether its services run (a saved one that cannot bind at start does not). */
type Deployed = { plan: TenantPlan; serving: boolean };

type AppsvcsCode = 'declarationInvalid' | 'declarationFailed' | 'deploymentBusy' | 'taskNotFound' | 'tenantNotFound';

/** An appsvcs failure `{code, message, ...}`: the registry's status (src/lib/errors.ts), the real product's message. */
export const appsvcsFailure = (code: AppsvcsCode, message: string = ERROR_CODES[code].message, extra: Record<string, unknown> = {}): Answer => ({
  status: ERROR_CODES[code].status,
  body: { code: ERROR_CODES[code].status, message, ...extra },
});

const isTenant = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { class?: unknown }).class === 'Tenant';
const isApplication = (value: unknown) => typeof value === 'object' && value !== null && (value as { class?: unknown }).class === 'Application';

/** A declaration's own fields: everything that is not a tenant. */
export const headerOf = (declaration: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(declaration).filter(([, value]) => !isTenant(value)));

export const tenantsOf = (declaration: Readonly<Record<string, unknown>>): [string, Record<string, unknown>][] =>
  Object.entries(declaration).filter((entry): entry is [string, Record<string, unknown>] => isTenant(entry[1]));

const tenantOfKey = (key: string) => key.split('/')[1]!;

/** A declaration as saved or planned, with its fingerprint when it is known. */
type Known = { declaration: Readonly<Record<string, unknown>>; fingerprint?: string | undefined };

/** Whether two declarations are the same: by their fingerprints when both have one (a walk of megabytes otherwise). */
const isSame = (a: Known | undefined, b: Known) =>
  a !== undefined && (a.fingerprint !== undefined && b.fingerprint !== undefined ? a.fingerprint === b.fingerprint : isSameTenant(a.declaration, b.declaration));

/** A tenant's plan: the one made when its request was checked (on the checker's thread), else made now. */
function planOf(tenant: string, declaration: Record<string, unknown>, checked: PlanOutcome | undefined): PlanResult {
  if (!checked) return planTenant(tenant, declaration);
  return checked.ok ? { ok: true, plan: { ...checked.plan, declaration: tenantWithDefaults(declaration) } } : checked;
}

/** Most attempts to apply a set of services when some of them cannot be bound. */
const APPLY_ATTEMPTS = 3;

/**
 * The device's deployed tenants: the running configuration (what GET shows and the data plane
 * serves), the saved one (`persist: true`), and the replacement of named tenants, whole (seed). Not
 * safe to call concurrently: the declarative service runs one operation at a time.
 */
export function createTenantDeployer(options: { store: DeclarationStore; dataPlane: DataPlanePort; clock: Clock; logger: Logger; hostname: string; schemaCurrent: string }) {
  const { store, dataPlane, clock, hostname, logger } = options;
  const running = new Map<string, Deployed>();
  /** The declarations as saved, to tell "already running but not yet saved" (persist false, then true). */
  const saved = new Map<string, Known>();
  let header: DeclarationHeader | undefined;
  let sequence = 0;

  // Ordered by time, then by this process's sequence; the random tail keeps two processes (or a restart
  // within one millisecond of the clock) from ever choosing the same id.
  const historyId = () => `${String(clock.nowMs()).padStart(15, '0')}-${String(sequence++ % 1_000_000).padStart(6, '0')}-${randomBytes(6).toString('hex')}`;
  const servicesOf = (tenants: ReadonlyMap<string, Deployed>) => [...tenants.values()].filter((d) => d.serving).flatMap((d) => d.plan.services);
  const warningsOf = (plan: TenantPlan) => (plan.warnings.length > 0 ? { warnings: [...plan.warnings] } : {});

  /**
   * Applies `next` to the data plane. A tenant whose listener cannot be bound is taken out (a changed one
   * falls back to what ran before, an unchanged one stops serving) and the rest is applied again.
   * Returns the failures of the tenants being changed, and the state that now runs.
   */
  async function applyServing(next: Map<string, Deployed>, changing: ReadonlySet<string>): Promise<Map<string, string>> {
    const failed = new Map<string, string>();
    for (let attempt = 0; attempt < APPLY_ATTEMPTS; attempt++) {
      const applied = await dataPlane.apply(servicesOf(next));
      if (applied.ok) return failed;
      for (const failure of applied.failures) {
        const tenant = tenantOfKey(failure.key);
        const message = `${failure.key}: cannot listen on ${failure.address} port ${failure.port}: ${failure.reason}`;
        if (changing.has(tenant) && !failed.has(tenant)) {
          failed.set(tenant, message);
          const old = running.get(tenant);
          if (old) next.set(tenant, old);
          else next.delete(tenant);
        } else if (next.get(tenant)?.serving) {
          logger.error({ tenant, failure: message }, 'a deployed tenant cannot listen; it stops serving until it is deployed again');
          next.set(tenant, { ...next.get(tenant)!, serving: false });
        }
      }
    }
    throw new Error('the data plane could not apply the deployed services');
  }

  /** The declaration as deployed, restricted to `names` (all tenants when undefined); `{}` when nothing was ever deployed. */
  function declarationOf(names?: ReadonlySet<string>): Record<string, unknown> {
    const chosen = [...running].filter(([name]) => !names || names.has(name));
    if (!header && chosen.length === 0) return {};
    const out: Record<string, unknown> = { ...(header ?? { class: 'ADC', schemaVersion: options.schemaCurrent }) };
    for (const [name, entry] of chosen) out[name] = entry.plan.declaration;
    return out;
  }

  return {
    declarationOf,
    has: (tenant: string) => running.has(tenant),
    tenants: () => [...running.keys()],
    header: () => header,
    services: () => servicesOf(running),

    /** Loads the saved configuration and starts what of it can listen. */
    async load() {
      const loaded = await store.load();
      header = loaded.header;
      for (const [tenant, declaration] of loaded.tenants) {
        saved.set(tenant, { declaration });
        const planned = planTenant(tenant, declaration as Record<string, unknown>);
        if (planned.ok) running.set(tenant, { plan: planned.plan, serving: true });
        else logger.error({ tenant }, 'a saved tenant no longer plans; it is not loaded');
      }
      const next = new Map(running);
      await applyServing(next, new Set());
      running.clear();
      for (const [tenant, entry] of next) running.set(tenant, entry);
    },

    /** Replaces the named tenants (null: remove), whole; under the service's lock. `plans`: those already planned. */
    async apply(
      named: readonly [string, Record<string, unknown> | null][],
      nextHeader: DeclarationHeader,
      persist: boolean,
      dryRun: boolean,
      plans?: ReadonlyMap<string, PlanOutcome>,
    ): Promise<Answer> {
      const results = new Map<string, TenantResult>();
      const started = clock.nowMs();
      const result = (tenant: string, fields: Omit<TenantResult, 'host' | 'tenant' | 'runTime'>) => results.set(tenant, { ...fields, host: hostname, tenant, runTime: clock.nowMs() - started });
      const fail = (tenant: string, response: string) => result(tenant, { code: 422, message: 'declaration failed', response });

      const changes = new Map<string, TenantPlan | null>();
      /** Running as declared but not saved yet (deployed before with persist false): saved now, answered `no change`. */
      const saveOnly = new Map<string, TenantPlan>();
      for (const [tenant, declaration] of named) {
        if (declaration === null || !Object.values(declaration).some(isApplication)) {
          if (running.has(tenant)) changes.set(tenant, null);
          else result(tenant, { code: 200, message: 'no change' });
          continue;
        }
        const planned = planOf(tenant, declaration, plans?.get(tenant));
        if (!planned.ok) {
          fail(tenant, planned.message);
          continue;
        }
        const current = running.get(tenant);
        if (current?.serving && isSame(current.plan, planned.plan)) {
          result(tenant, { code: 200, message: 'no change', lineCount: planned.plan.lineCount, ...warningsOf(planned.plan) });
          if (persist && !isSame(saved.get(tenant), planned.plan)) saveOnly.set(tenant, planned.plan);
        } else {
          changes.set(tenant, planned.plan);
        }
      }
      const kept = [...running.values()].filter((d) => !changes.has(d.plan.tenant)).map((d) => d.plan);
      for (const [tenant, message] of findAddressConflicts([...changes.values()].filter((p): p is TenantPlan => p !== null), kept)) {
        changes.delete(tenant);
        fail(tenant, message);
      }

      if (!dryRun && (changes.size > 0 || saveOnly.size > 0)) {
        const next = new Map(running);
        for (const [tenant, plan] of changes) (plan ? next.set(tenant, { plan, serving: true }) : next.delete(tenant));
        if (changes.size > 0) {
          for (const [tenant, message] of await applyServing(next, new Set(changes.keys()))) {
            changes.delete(tenant);
            fail(tenant, message);
          }
        }
        if (persist && (changes.size > 0 || saveOnly.size > 0)) {
          const savedPlans = [...changes, ...saveOnly];
          const stored: TenantChange[] = savedPlans.map(([tenant, plan]) => ({ tenant, declaration: plan ? plan.declaration : null }));
          const full = { ...nextHeader, ...Object.fromEntries([...next].map(([name, d]) => [name, d.plan.declaration])) };
          try {
            await store.save(nextHeader, stored, full, clock.nowMs(), historyId());
          } catch (error) {
            // Back to what runs and is saved; if even that fails the data plane is out of step, said loudly.
            const back = await dataPlane.apply(servicesOf(running)).catch((e: unknown) => ({ ok: false as const, failures: [{ key: '', address: '', port: 0, reason: String(e) }] }));
            if (!back.ok) logger.error({ failures: back.failures }, 'after a failed save the data plane could not go back: it serves what is not saved');
            throw error;
          }
          for (const [tenant, plan] of savedPlans) (plan ? saved.set(tenant, { declaration: plan.declaration, fingerprint: plan.fingerprint }) : saved.delete(tenant));
        }
        // What the data plane now runs (a tenant that could not listen included, as not serving).
        running.clear();
        for (const [tenant, entry] of next) running.set(tenant, entry);
        if (changes.size > 0) header = nextHeader;
      }
      for (const [tenant, plan] of changes) result(tenant, { code: 200, message: 'success', ...(plan ? { lineCount: plan.lineCount, ...warningsOf(plan) } : {}) });

      const ordered = named.map(([tenant]) => results.get(tenant)).filter((r): r is TenantResult => r !== undefined);
      if (ordered.length === 0) ordered.push({ code: 200, message: 'no change', host: hostname, runTime: clock.nowMs() - started });
      const okCount = ordered.filter((r) => r.code === 200).length;
      const status = okCount === ordered.length ? 200 : okCount === 0 ? 422 : 207;
      return {
        status,
        body: {
          ...(status === 422 ? (appsvcsFailure('declarationFailed').body as object) : {}),
          results: ordered.map(({ tenant, ...rest }) => (tenant ? { ...rest, tenant } : rest)),
          declaration: declarationOf(new Set(named.map(([tenant]) => tenant))),
          ...(dryRun ? { dryRun: true } : {}),
        },
      };
    },
  };
}

export type TenantDeployer = ReturnType<typeof createTenantDeployer>;
