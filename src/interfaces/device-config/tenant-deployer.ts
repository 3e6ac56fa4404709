import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/logger.ts';
import { type Applied, RESULT_CODE, type TenantResult } from './appsvcs-outcome.ts';
import { findAddressConflicts } from './declaration/conflicts.ts';
import { attachRules, type DeployedService, type RuleSupport } from './declaration/deploy-rules.ts';
import { objectText } from './declaration/json-text.ts';
import type { PlanSummary, PreparedDeclaration, PreparedTenant } from './declaration/prepared.ts';
import type { DeclarationStore, TenantChange } from './declaration-store.ts';

/** The data plane the deployed services run on (src/traffic/data-plane.ts). */
export type DataPlanePort = {
  apply(
    services: readonly DeployedService[],
  ): Promise<{ ok: true } | { ok: false; failures: readonly { key: string; address: string; port: number; reason: string }[] }>;
};

/**
 * A tenant planned: its plan, its declaration's text as stored, its services with their rules compiled
 * and the signature of the stored script objects they read (deploy-rules.ts).
 */
type Planned = { plan: PlanSummary; text: string; services: readonly DeployedService[]; signature: string };
/** A deployed tenant, and whether its services run (a saved one that cannot bind at start does not). */
type Deployed = Planned & { serving: boolean };
/** A declaration's own members (`class`, `schemaVersion`, ...) as JSON texts. */
export type HeaderMembers = readonly (readonly [key: string, text: string])[];

const tenantOfKey = (key: string) => key.split('/')[1]!;

/** Most attempts to apply a set of services when some of them cannot be bound. */
const APPLY_ATTEMPTS = 3;

/**
 * The device's deployed tenants: the running configuration (what GET shows and the data plane
 * serves), the saved one (`persist: true`), and the replacement of named tenants, whole (seed). Not
 * safe to call concurrently: the declarative service runs one operation at a time. Declarations are
 * held as JSON text and compared by fingerprint (prepared.ts): nothing here walks a declaration.
 */
export function createTenantDeployer(options: {
  store: DeclarationStore;
  dataPlane: DataPlanePort;
  clock: Clock;
  logger: Logger;
  hostname: string;
  schemaCurrent: string;
  /** Parses and prepares a saved declaration (the declaration checker: on its thread when large). */
  prepare: (text: string) => Promise<{ ok: true; declaration: PreparedDeclaration } | { ok: false }>;
  /** The device's stored script objects and the rule interpreter; without it a service that names rules fails. */
  rules?: RuleSupport;
}) {
  const { store, dataPlane, clock, hostname, logger } = options;
  const running = new Map<string, Deployed>();
  /** The fingerprints of the declarations as saved, to tell "already running but not yet saved" (persist false, then true). */
  const saved = new Map<string, string>();
  let header: HeaderMembers | undefined;
  let sequence = 0;

  // Ordered by time, then by this process's sequence; the random tail keeps two processes (or a restart
  // within one millisecond of the clock) from ever choosing the same id.
  const historyId = () =>
    `${String(clock.nowMs()).padStart(15, '0')}-${String(sequence++ % 1_000_000).padStart(6, '0')}-${randomBytes(6).toString('hex')}`;
  const servicesOf = (tenants: ReadonlyMap<string, Deployed>) => [...tenants.values()].filter((d) => d.serving).flatMap((d) => d.services);
  const warningsOf = (plan: PlanSummary) => (plan.warnings.length > 0 ? { warnings: [...plan.warnings] } : {});
  const defaultHeader = (): HeaderMembers => [
    ['class', '"ADC"'],
    ['schemaVersion', JSON.stringify(options.schemaCurrent)],
  ];

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

  /** The JSON text of the declaration as deployed, restricted to `names` (all tenants when undefined); `{}` when nothing was ever deployed. */
  function declarationOf(names?: ReadonlySet<string>): string {
    const chosen = [...running].filter(([name]) => !names || names.has(name));
    if (!header && chosen.length === 0) return '{}';
    return objectText([...(header ?? defaultHeader()), ...chosen.map(([name, entry]): [string, string] => [name, entry.text])]);
  }

  return {
    declarationOf,
    has: (tenant: string) => running.has(tenant),
    tenants: () => [...running.keys()],
    header: () => header,
    services: () => servicesOf(running),

    /** Forgets the running configuration (a device that stepped down to standby; its data plane is emptied by the caller). */
    reset() {
      running.clear();
      saved.clear();
      header = undefined;
    },

    /** Loads the saved configuration (prepared from its text, on the checker's thread when large) and starts what of it can listen. */
    async load() {
      const loaded = await store.load();
      if (!loaded.header && loaded.tenants.length === 0) return;
      // One declaration of the saved header's members and the saved tenants, put together as text.
      const headerInner = loaded.header && loaded.header.length > 2 ? loaded.header.slice(1, -1) : '';
      const tenantsInner = objectText(loaded.tenants).slice(1, -1);
      const prepared = await options.prepare(`{${[headerInner, tenantsInner].filter((part) => part !== '').join(',')}}`);
      if (!prepared.ok) throw new Error('the saved declaration is not JSON');
      if (loaded.header) header = prepared.declaration.header;
      for (const [tenant, entry] of prepared.declaration.tenants) {
        if (entry.kind !== 'plan') {
          logger.error({ tenant }, 'a saved tenant no longer plans; it is not loaded');
          continue;
        }
        const attached = await attachRules(entry.plan, options.rules);
        if (!attached.ok) {
          logger.error({ tenant, failure: attached.message }, 'the rules of a saved tenant cannot run; it is not loaded');
          continue;
        }
        saved.set(tenant, entry.plan.fingerprint);
        running.set(tenant, {
          plan: entry.plan,
          text: entry.text,
          services: attached.services,
          signature: attached.signature,
          serving: true,
        });
      }
      const next = new Map(running);
      await applyServing(next, new Set());
      running.clear();
      for (const [tenant, entry] of next) running.set(tenant, entry);
    },

    /** Replaces the named tenants (null: remove), whole, as prepared (prepared.ts); under the service's lock. */
    async apply(
      named: readonly [string, PreparedTenant | null][],
      nextHeader: HeaderMembers,
      persist: boolean,
      dryRun: boolean,
    ): Promise<Applied> {
      const results = new Map<string, TenantResult>();
      const started = clock.nowMs();
      const result = (tenant: string, fields: Omit<TenantResult, 'host' | 'tenant' | 'runTime'>) =>
        results.set(tenant, { ...fields, host: hostname, tenant, runTime: clock.nowMs() - started });
      const fail = (tenant: string, response: string) =>
        result(tenant, { code: RESULT_CODE.failed, message: 'declaration failed', response });

      const changes = new Map<string, Planned | null>();
      /** Running as declared but not saved yet (deployed before with persist false): saved now, answered `no change`. */
      const saveOnly = new Map<string, Planned>();
      for (const [tenant, prepared] of named) {
        if (prepared === null || prepared.kind === 'remove') {
          if (running.has(tenant)) changes.set(tenant, null);
          else result(tenant, { code: RESULT_CODE.success, message: 'no change' });
          continue;
        }
        if (prepared.kind === 'failed') {
          fail(tenant, prepared.message);
          continue;
        }
        // Its rules are read (stored script objects) and compiled now: a rule that cannot run fails the tenant here.
        const attached = await attachRules(prepared.plan, options.rules);
        if (!attached.ok) {
          fail(tenant, attached.message);
          continue;
        }
        const planned: Planned = { plan: prepared.plan, text: prepared.text, services: attached.services, signature: attached.signature };
        const current = running.get(tenant);
        if (current?.serving && current.plan.fingerprint === planned.plan.fingerprint && current.signature === planned.signature) {
          result(tenant, {
            code: RESULT_CODE.success,
            message: 'no change',
            lineCount: planned.plan.lineCount,
            ...warningsOf(planned.plan),
          });
          if (persist && saved.get(tenant) !== planned.plan.fingerprint) saveOnly.set(tenant, planned);
        } else {
          changes.set(tenant, planned);
        }
      }
      const kept = [...running.values()].filter((d) => !changes.has(d.plan.tenant)).map((d) => d.plan);
      for (const [tenant, message] of findAddressConflicts(
        [...changes.values()].filter((p): p is Planned => p !== null).map((p) => p.plan),
        kept,
      )) {
        changes.delete(tenant);
        fail(tenant, message);
      }

      if (!dryRun && (changes.size > 0 || saveOnly.size > 0)) {
        const next = new Map(running);
        for (const [tenant, planned] of changes) planned ? next.set(tenant, { ...planned, serving: true }) : next.delete(tenant);
        if (changes.size > 0) {
          for (const [tenant, message] of await applyServing(next, new Set(changes.keys()))) {
            changes.delete(tenant);
            fail(tenant, message);
          }
        }
        if (persist && (changes.size > 0 || saveOnly.size > 0)) {
          const savedPlans = [...changes, ...saveOnly];
          const stored: TenantChange[] = savedPlans.map(([tenant, planned]) => ({ tenant, text: planned ? planned.text : null }));
          const full = objectText([...nextHeader, ...[...next].map(([name, d]): [string, string] => [name, d.text])]);
          try {
            await store.save(objectText(nextHeader), stored, full, clock.nowMs(), historyId());
          } catch (error) {
            // Back to what runs and is saved; if even that fails the data plane is out of step, said loudly.
            const back = await dataPlane
              .apply(servicesOf(running))
              .catch((e: unknown) => ({ ok: false as const, failures: [{ key: '', address: '', port: 0, reason: String(e) }] }));
            if (!back.ok)
              logger.error(
                { failures: back.failures },
                'after a failed save the data plane could not go back: it serves what is not saved',
              );
            throw error;
          }
          for (const [tenant, planned] of savedPlans) planned ? saved.set(tenant, planned.plan.fingerprint) : saved.delete(tenant);
        }
        // What the data plane now runs (a tenant that could not listen included, as not serving).
        running.clear();
        for (const [tenant, entry] of next) running.set(tenant, entry);
        if (changes.size > 0) header = nextHeader;
      }
      for (const [tenant, planned] of changes)
        result(tenant, {
          code: RESULT_CODE.success,
          message: 'success',
          ...(planned ? { lineCount: planned.plan.lineCount, ...warningsOf(planned.plan) } : {}),
        });

      const ordered = named.map(([tenant]) => results.get(tenant)).filter((r): r is TenantResult => r !== undefined);
      if (ordered.length === 0)
        ordered.push({ code: RESULT_CODE.success, message: 'no change', host: hostname, runTime: clock.nowMs() - started });
      const okCount = ordered.filter((r) => r.code === RESULT_CODE.success).length;
      return {
        kind: okCount === ordered.length ? 'done' : okCount === 0 ? 'failed' : 'partial',
        results: ordered.map(({ tenant, ...rest }) => (tenant ? { ...rest, tenant } : rest)),
        declaration: declarationOf(new Set(named.map(([tenant]) => tenant))),
        dryRun,
      };
    },
  };
}

export type TenantDeployer = ReturnType<typeof createTenantDeployer>;
