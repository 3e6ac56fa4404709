import { createHash } from 'node:crypto';
import type { CompiledRules, DataGroup, RuleRefusal } from '../../../traffic/irules/types.ts';
import type { ServiceRules } from '../../../traffic/service-rules.ts';
import { clip } from './model.ts';
import type { ServicePlan } from './plan.ts';
import type { PlanSummary } from './prepared.ts';

/** The interpreter's entry (src/traffic/irules/): a service's rules, in order, compiled, or why one cannot run. */
export type CompileRules = (
  rules: readonly { name: string; text: string }[],
) => { ok: true; rules: CompiledRules } | { ok: false; refusal: RuleRefusal };

/** What deploying rules needs from the device: its stored script objects, and the interpreter. */
export type RuleSupport = {
  /** The text of the script object stored at `/Partition/name` (/mgmt/tm/traffic/rule), undefined when there is none. */
  stored(path: string): Promise<string | undefined>;
  compile: CompileRules;
};

/** A service as the data plane runs it: its plan, and its rules compiled. */
export type DeployedService = Omit<ServicePlan, 'iRules'> & { rules?: ServiceRules };

/**
 * A tenant's services with their rules compiled, and `signature`, which stands for the stored script
 * objects they read (a tenant whose declaration is unchanged but whose stored rules changed is deployed
 * again); or the failure message of the first reference to nothing or rule refused.
 */
export type AttachedRules = { ok: true; services: DeployedService[]; signature: string } | { ok: false; message: string };

/**
 * The rules every device has under /Common (the real product's system rules), by path: a `{bigip}`
 * reference finds them without a stored script object. The same behaviour as the real one, in the
 * commands this device runs.
 */
export const BUILT_IN_RULES: Readonly<Record<string, string>> = {
  '/Common/_sys_https_redirect': 'when HTTP_REQUEST {\n    HTTP::redirect https://[lindex [split [HTTP::host] ":"] 0][HTTP::uri]\n}',
};

const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('base64url');

/** `01070151:3: Rule [/T/A/r] error: ... line 3: unknown command "X"`: the real product's rule error, naming the line and the command. */
export function refusalMessage(refusal: RuleRefusal): string {
  // The rule is named once, in the brackets (the interpreter's message may name it too).
  const named = `rule "${refusal.rule}", `;
  let detail = refusal.message.startsWith(named) ? refusal.message.slice(named.length) : refusal.message;
  if (refusal.command && !detail.includes(refusal.command)) detail = `${refusal.command}: ${detail}`;
  if (!detail.includes(`line ${refusal.line}`)) detail = `line ${refusal.line}: ${detail}`;
  return `01070151:3: Rule [${clip(refusal.rule, 255)}] error: ${clip(detail, 300)}`;
}

/** The names a rule of a service in `/T/A/` may use for the tenant's object at `key`: its path, and its own name in the same application. */
function byNames<T>(objects: Readonly<Record<string, T>>, serviceKey: string): Record<string, T> {
  const application = serviceKey.slice(0, serviceKey.lastIndexOf('/') + 1);
  const named: Record<string, T> = {};
  for (const [key, value] of Object.entries(objects)) {
    named[key] = value;
    if (key.startsWith(application) && !key.slice(application.length).includes('/')) named[key.slice(application.length)] = value;
  }
  return named;
}

/**
 * Resolves and compiles the rules of a planned tenant's services (on the event loop, when the tenant
 * is deployed or loaded): `{bigip}` references are read from the device's script objects, every
 * service's list is compiled once (services with the same list share it).
 *
 * @example
 * const attached = await attachRules(plan, { stored: (path) => store.ruleText(path), compile: compileRules });
 * if (!attached.ok) fail(tenant, attached.message);
 */
export async function attachRules(plan: PlanSummary, support: RuleSupport | undefined): Promise<AttachedRules> {
  const withRules = plan.services.filter((service) => service.iRules);
  if (withRules.length === 0) return { ok: true, services: plan.services, signature: '' };
  const tenant = plan.rules ?? { texts: {}, pools: {}, dataGroups: {} };
  const stored = new Map<string, string>();
  for (const service of withRules) {
    for (const [index, reference] of service.iRules!.entries()) {
      if (!reference.stored || stored.has(reference.path)) continue;
      const text = Object.hasOwn(BUILT_IN_RULES, reference.path) ? BUILT_IN_RULES[reference.path] : await support?.stored(reference.path);
      if (text === undefined)
        return {
          ok: false,
          message: `${service.key}/iRules/${index}: 01020036:3: The requested rule (${clip(reference.path)}) was not found.`,
        };
      stored.set(reference.path, text);
    }
  }
  if (!support) return { ok: false, message: `${withRules[0]!.key}/iRules: rules cannot run on this device` };

  const compiled = new Map<string, CompiledRules>();
  const services: DeployedService[] = [];
  for (const { iRules, ...service } of plan.services) {
    if (!iRules) {
      services.push(service);
      continue;
    }
    const rules = iRules.map((reference) => ({
      name: reference.path,
      text: (reference.stored ? stored.get(reference.path) : tenant.texts[reference.path]) ?? '',
    }));
    const id = hash(rules);
    let done = compiled.get(id);
    if (!done) {
      const outcome = support.compile(rules);
      if (!outcome.ok) {
        const index = Math.max(
          0,
          rules.findIndex((rule) => rule.name === outcome.refusal.rule),
        );
        return { ok: false, message: `${service.key}/iRules/${index}: ${refusalMessage(outcome.refusal)}` };
      }
      compiled.set(id, (done = outcome.rules));
    }
    const pools = byNames(tenant.pools, service.key);
    const dataGroups: Record<string, DataGroup> = byNames(tenant.dataGroups, service.key);
    services.push({ ...service, rules: { compiled: done, pools, dataGroups, fingerprint: hash([id, pools, dataGroups]) } });
  }
  return { ok: true, services, signature: hash([...stored].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}
