import type { ErrorObject, ValidateFunction } from 'ajv';
import { escapeSegment, isObject } from '../../lib/contract/json-pointer.ts';

/** One thing wrong with a request: a JSON pointer into it and a sentence saying what. */
export type Problem = { pointer: string; message: string };

export type CheckDeps = {
  /** ajv validators of the spec's schemas by name, e.g. schema('TopologyRequest') (createSpecValidator(document).at). */
  schema: (name: string) => ValidateFunction;
  /** Host names of the devices in the management system's inventory. */
  knownDevices: ReadonlySet<string>;
};

const MAX_PROBLEMS = 100;
/** Conditions are no longer checked once this many problems are known (the count then says "at least"). */
const PROBLEM_BUDGET = 10_000;
const NAME_MESSAGE = "must start with a letter and hold only letters, digits, '_', '.' or '-' (at most 48 characters)";
const PORT_MESSAGE = 'must be a port number from 1 to 65535, as a string';
const FORMAT_WORDS: ReadonlyMap<string, string> = new Map([
  ['ipv4', 'an IPv4 address'],
  ['ipv6', 'an IPv6 address'],
]);
/** The condition types the spec validates strictly; any other type is an OtherCondition (spec: Condition). */
const CONDITION_SCHEMAS: ReadonlyMap<string, string> = new Map([
  ['SNI Category Lookup', 'SniCategoryLookupCondition'],
  ['SSL Check', 'SslCheckCondition'],
]);
/** The member of SERVICE_CHAIN or SERVICE an error is under. */
const LABELLED = /^\/template\/SERVICE(?:_CHAIN)?\/[^/]*/;
const POLICY = '/template/SECURITY_POLICY';
/** One past the largest `maxItems` (rules, categories: 256) and `maxProperties` (SERVICE_CHAIN, SERVICE: 64) of TopologyRequest. */
const LIST_LIMIT = 257;
const MAP_LIMIT = 65;
/** Deeper than any schema of the request reaches (a category: /template/SECURITY_POLICY/rules/i/conditions/j/options/category/k). */
const VIEW_DEPTH = 10;
/** A condition every branch of `Condition` but OtherCondition refuses, and OtherCondition accepts. */
const CONDITION_STAND_IN = Object.freeze({ type: '-', options: Object.freeze({}) });

/** An own member only: a request member named `constructor` or `__proto__` must not find Object.prototype's. */
const own = (value: unknown, key: string): unknown => (isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const list = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);
const at = (pointer: string, ...segments: (string | number)[]) => pointer + segments.map((s) => `/${escapeSegment(s)}`).join('');

/** A value of the request as a message quotes it: at most 64 characters, so a problem list stays bounded. */
function quote(value: string, max = 64): string {
  if (value.length <= max) return `'${value}'`;
  const cut = value.slice(0, max - 3);
  return `'${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}...'`;
}

/**
 * Every problem of a topology request, schema first, then the name references between its sections,
 * the default rule and the targets, in document order, at most 100 then one "... and N more"; [] when
 * the request is valid. Never throws, whatever `body` is; its work is bounded (see boundedView), and a
 * request with more than 10 000 problems has its conditions checked only until then.
 *
 * @example
 * checkTopologyRequest({ template: {} }, deps)[0]; // { pointer: '', message: "must have required property 'targetList'" }
 */
export function checkTopologyRequest(body: unknown, deps: CheckDeps): Problem[] {
  const { view, forSchema, conditions } = boundedView(body);
  const { problems, rejectedLabels } = schemaProblems(forSchema, deps.schema);
  // Each list is cut, but there can be 257 rules of 257 conditions of 257 categories.
  let complete = true;
  for (const { pointer, condition } of conditions) {
    if (problems.length >= PROBLEM_BUDGET) complete = false;
    if (!complete) break;
    // One by one: a condition with 100 000 unknown options is 100 000 problems, too many to spread into push().
    for (const problem of conditionProblems(condition, pointer, deps.schema)) problems.push(problem);
  }
  const seen = new Set<string>();
  const unique = [...problems, ...semanticProblems(view, body, deps.knownDevices, rejectedLabels)].filter(({ pointer, message }) => {
    const key = `${pointer}\u0000${message}`;
    return !seen.has(key) && seen.add(key);
  });
  const ordered = inDocumentOrder(body, unique);
  if (ordered.length <= MAX_PROBLEMS && complete) return ordered;
  return [
    ...ordered.slice(0, MAX_PROBLEMS),
    { pointer: '', message: `... and ${complete ? '' : 'at least '}${ordered.length - MAX_PROBLEMS} more` },
  ];
}

/**
 * The request as the checks read it, so that their cost is bounded whatever its size: every list cut
 * one item past the schema's largest `maxItems`, SERVICE_CHAIN and SERVICE one member past their
 * `maxProperties` (a list or a map over its limit is still reported, by the schema). A cut keeps
 * every pointer. `forSchema` has each condition replaced by a stand-in that any `Condition` accepts:
 * ajv (allErrors) would report every branch of the `oneOf` for every condition and copies the errors
 * of each `$ref`'d schema into its caller's, quadratic in their number; `conditions` are judged one by
 * one instead, by the schema their type picks.
 */
function boundedView(body: unknown) {
  const conditions: { pointer: string; condition: unknown }[] = [];
  /** `place`: the request itself, its template, SERVICE_CHAIN or SERVICE (a map), or anything else. */
  const copy = (value: unknown, depth: number, place: 'request' | 'template' | 'map' | 'other'): unknown => {
    if (depth > VIEW_DEPTH) return value;
    if (Array.isArray(value)) return value.slice(0, LIST_LIMIT).map((item) => copy(item, depth + 1, 'other'));
    if (!isObject(value)) return value;
    const placeOf = (key: string) =>
      place === 'request' && key === 'template'
        ? 'template'
        : place === 'template' && (key === 'SERVICE_CHAIN' || key === 'SERVICE')
          ? 'map'
          : 'other';
    const entries = Object.entries(value).slice(0, place === 'map' ? MAP_LIMIT : undefined);
    return Object.fromEntries(entries.map(([key, member]) => [key, copy(member, depth + 1, placeOf(key))]));
  };
  const view = copy(body, 0, 'request');
  const rules = list(own(own(own(view, 'template'), 'SECURITY_POLICY'), 'rules'));
  const standInRules = rules.map((rule, i) => {
    const ruleConditions = own(rule, 'conditions');
    if (!Array.isArray(ruleConditions)) return rule;
    for (const [j, condition] of ruleConditions.entries()) conditions.push({ pointer: at(POLICY, 'rules', i, 'conditions', j), condition });
    return { ...(rule as object), conditions: ruleConditions.map(() => CONDITION_STAND_IN) };
  });
  const policy = own(own(view, 'template'), 'SECURITY_POLICY');
  const forSchema = !Array.isArray(own(policy, 'rules'))
    ? view
    : {
        ...(view as object),
        template: { ...(own(view, 'template') as object), SECURITY_POLICY: { ...(policy as object), rules: standInRules } },
      };
  return { view, forSchema, conditions };
}

/** ajv's error in words a client can act on. */
function schemaMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.schemaPath.includes('/ObjectName/') && ['pattern', 'minLength', 'maxLength'].includes(error.keyword)) return NAME_MESSAGE;
  switch (error.keyword) {
    case 'enum':
      return `must be equal to one of the allowed values: ${list(params.allowedValues).map(String).join(', ')}`;
    case 'const':
      return `must be equal to ${quote(String(params.allowedValue))}`;
    case 'additionalProperties':
      return `must NOT have additional property ${quote(String(params.additionalProperty))}`;
    case 'pattern':
      return error.schemaPath.endsWith('/port/pattern') ? PORT_MESSAGE : (error.message ?? 'is invalid');
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * ajv's errors as problems. Format branches of an `anyOf` (an address) become one "must be an IPv4
 * address or an IPv6 address"; a label of SERVICE_CHAIN or SERVICE the schema rejects is reported once
 * and not descended into (it would lead every pointer below it).
 */
function schemaProblems(body: unknown, schema: CheckDeps['schema']) {
  const validate = schema('TopologyRequest');
  const errors = validate(body) ? [] : [...(validate.errors ?? [])];
  const problems: Problem[] = [];
  const rejectedLabels = new Set(errors.filter((e) => e.propertyName !== undefined).map((e) => at(e.instancePath, e.propertyName!)));
  const formats = new Map<string, string[]>();
  for (const error of errors) {
    const { instancePath: pointer, keyword, schemaPath } = error;
    const label = LABELLED.exec(pointer)?.[0];
    if (keyword === 'propertyNames' || (label !== undefined && rejectedLabels.has(label))) continue;
    const branch = /^(.*\/anyOf)\/\d+\/format$/.exec(schemaPath);
    if (branch) {
      const key = `${pointer}\u0000${branch[1]}`;
      formats.set(key, [...(formats.get(key) ?? []), String(error.params.format)]);
    } else if (keyword === 'anyOf' && formats.has(`${pointer}\u0000${schemaPath}`)) {
      problems.push({
        pointer,
        message: `must be ${formats
          .get(`${pointer}\u0000${schemaPath}`)!
          .map((f) => FORMAT_WORDS.get(f) ?? f)
          .join(' or ')}`,
      });
    } else {
      const prefix = error.propertyName === undefined ? '' : `property name ${quote(error.propertyName)} `;
      problems.push({ pointer, message: prefix + schemaMessage(error) });
    }
  }
  return { problems, rejectedLabels };
}

/** A condition against the one schema its `type` picks, with pointers into the whole request. */
function conditionProblems(condition: unknown, pointer: string, schema: CheckDeps['schema']): Problem[] {
  if (!isObject(condition)) return [{ pointer, message: 'must be object' }];
  const type = own(condition, 'type');
  if (typeof type !== 'string') return [{ pointer, message: 'must have a string type' }];
  const validate = schema(CONDITION_SCHEMAS.get(type) ?? 'OtherCondition');
  if (validate(condition)) return [];
  return (validate.errors ?? []).map((error) => ({ pointer: pointer + error.instancePath, message: schemaMessage(error) }));
}

/**
 * The name references between the sections, the default rule, unique names and the targets, reported
 * within `view`; what a whole list holds (the chain and service names, the default rules) is read from
 * `whole`, so that a cut never makes a reference or the default rule look missing.
 */
function semanticProblems(
  view: unknown,
  whole: unknown,
  knownDevices: ReadonlySet<string>,
  rejectedLabels: ReadonlySet<string>,
): Problem[] {
  const problems: Problem[] = [];
  const report = (pointer: string, message: string) => problems.push({ pointer, message });
  const template = own(view, 'template');
  const [topology, sslSettings, policy] = ['TOPOLOGY', 'SSL_SETTINGS', 'SECURITY_POLICY'].map((key) => own(template, key));
  const sections = (key: 'SERVICE_CHAIN' | 'SERVICE') => {
    const [section, viewed] = [own(own(whole, 'template'), key), own(template, key)];
    const names = new Set((isObject(section) ? Object.values(section) : []).map((value) => text(own(value, 'name'))));
    const usable = (isObject(viewed) ? Object.entries(viewed) : []).filter(([label]) => !rejectedLabels.has(at('/template', key, label)));
    return { present: isObject(section), names, usable, pointer: at('/template', key) };
  };
  const chains = sections('SERVICE_CHAIN');
  const services = sections('SERVICE');

  for (const [member, section, sectionName] of [
    ['sslSetting', sslSettings, 'SSL_SETTINGS'],
    ['securityPolicy', policy, 'SECURITY_POLICY'],
  ] as const) {
    const reference = text(own(topology, member));
    const name = text(own(section, 'name'));
    if (reference !== undefined && name !== undefined && reference !== name) {
      report(at('/template/TOPOLOGY', member), `TOPOLOGY.${member} ${quote(reference)} does not match ${sectionName}.name ${quote(name)}.`);
    }
  }

  const rules = own(policy, 'rules');
  const allRules = list(own(own(own(whole, 'template'), 'SECURITY_POLICY'), 'rules'));
  if (Array.isArray(rules)) {
    const policyName = text(own(policy, 'name'));
    const policyLabel = policyName === undefined ? 'SECURITY_POLICY' : `SECURITY_POLICY ${quote(policyName)}`;
    const ruleLabel = (i: number) => {
      const name = text(own(allRules[i], 'name'));
      return name === undefined ? `#${i}` : quote(name);
    };
    const defaults = allRules.flatMap((rule, i) => (own(rule, 'isDefault') === true ? [i] : []));
    if (defaults.length === 0) report(at(POLICY, 'rules'), `${policyLabel} has no default rule (isDefault: true); it needs exactly one.`);
    if (defaults.length > 1) {
      const named = defaults.slice(0, 2).map(ruleLabel).join(', ') + (defaults.length > 2 ? ', ...' : '');
      report(at(POLICY, 'rules'), `${policyLabel} has ${defaults.length} default rules (${named}); it needs exactly one.`);
    }
    for (const i of defaults.filter((i) => i < rules.length)) {
      const count = list(own(allRules[i], 'conditions')).length;
      if (count > 0)
        report(
          at(POLICY, 'rules', i, 'conditions'),
          `Rule ${ruleLabel(i)} is the default rule and has ${count} condition${count === 1 ? '' : 's'}; the default rule has none.`,
        );
    }
    const ruleNames = new Set<string>();
    rules.forEach((rule, i) => {
      const name = text(own(rule, 'name'));
      if (name !== undefined && ruleNames.has(name))
        report(
          at(POLICY, 'rules', i, 'name'),
          `Rule name ${quote(name)} is used more than once in ${policyLabel}; rule names are unique within a policy.`,
        );
      if (name !== undefined) ruleNames.add(name);
      const chain = text(own(own(rule, 'actionOptions'), 'serviceChain'));
      if (chain !== undefined && chains.present && !chains.names.has(chain)) {
        report(
          at(POLICY, 'rules', i, 'actionOptions', 'serviceChain'),
          `Rule ${ruleLabel(i)}: actionOptions.serviceChain ${quote(chain)} names no chain in SERVICE_CHAIN.`,
        );
      }
    });
  }

  for (const [label, chain] of chains.usable) {
    const chainName = quote(text(own(chain, 'name')) ?? label);
    list(own(chain, 'orderedServiceList')).forEach((entry, j) => {
      const service = text(own(entry, 'name'));
      if (service !== undefined && services.present && !services.names.has(service)) {
        report(
          at(chains.pointer, label, 'orderedServiceList', j, 'name'),
          `Service chain ${chainName}: orderedServiceList entry ${quote(service)} names no service in SERVICE.`,
        );
      }
    });
  }
  reportDuplicateNames(chains.usable, chains.pointer, 'Service chain', 'SERVICE_CHAIN', report);
  reportDuplicateNames(services.usable, services.pointer, 'Service', 'SERVICE', report);
  for (const [label, service] of services.usable) {
    const serviceName = quote(text(own(service, 'name')) ?? label);
    const pairs = new Set<string>();
    list(own(own(own(service, 'customService'), 'loadBalancing'), 'devices')).forEach((device, k) => {
      const [ip, port] = [text(own(device, 'ip')), text(own(device, 'port'))];
      if (ip === undefined || port === undefined) return;
      const pair = `${ip}\u0000${port}`;
      if (pairs.has(pair)) {
        report(
          at(services.pointer, label, 'customService', 'loadBalancing', 'devices', k),
          `Service ${serviceName}: device ${quote(ip)} port ${quote(port)} is listed more than once.`,
        );
      }
      pairs.add(pair);
    });
  }

  const targetNames = new Set<string>();
  list(own(view, 'targetList')).forEach((target, k) => {
    const [type, name] = [text(own(target, 'type')), text(own(target, 'name'))];
    if (type !== undefined && type !== 'DEVICE') {
      report(
        at('/targetList', k, 'type'),
        `targetList entry ${name === undefined ? `#${k}` : quote(name)} has type ${quote(type)}; only DEVICE targets are supported.`,
      );
    } else if (name !== undefined && !knownDevices.has(name)) {
      report(at('/targetList', k, 'name'), `targetList: no DEVICE named ${quote(name)} is managed by this system.`);
    }
    if (name !== undefined && targetNames.has(name))
      report(at('/targetList', k, 'name'), `targetList: device ${quote(name)} is listed more than once.`);
    if (name !== undefined) targetNames.add(name);
  });
  return problems;
}

/** Names unique across SERVICE_CHAIN (or SERVICE): each repeat is reported at its own `name`. */
function reportDuplicateNames(
  entries: [string, unknown][],
  pointer: string,
  kind: string,
  section: string,
  report: (pointer: string, message: string) => void,
) {
  const names = new Set<string>();
  for (const [label, value] of entries) {
    const name = text(own(value, 'name'));
    if (name === undefined) continue;
    if (names.has(name))
      report(
        at(pointer, label, 'name'),
        `${kind} name ${quote(name)} is used more than once in ${section}; ${kind.toLowerCase()} names are unique.`,
      );
    names.add(name);
  }
}

/**
 * Problems in the order their places appear in the request (a parent before its members); problems
 * at one place keep their order, so schema problems come first. Only the pointers' paths are walked.
 */
function inDocumentOrder(body: unknown, problems: Problem[]): Problem[] {
  const keyOrder = new WeakMap<object, Map<string, number>>();
  const position = (node: unknown, segment: string): number => {
    if (Array.isArray(node)) return /^(0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : Infinity;
    if (!isObject(node)) return Infinity;
    let order = keyOrder.get(node);
    if (!order) keyOrder.set(node, (order = new Map(Object.keys(node).map((key, i) => [key, i]))));
    return order.get(segment) ?? Infinity;
  };
  const child = (node: unknown, segment: string) => (Array.isArray(node) ? node[Number(segment)] : own(node, segment));
  const segments = new Map(
    problems.map(({ pointer }) => [
      pointer,
      pointer
        .split('/')
        .slice(1)
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~')),
    ]),
  );
  return problems.toSorted((a, b) => {
    const [sa, sb] = [segments.get(a.pointer)!, segments.get(b.pointer)!];
    let node = body;
    for (let i = 0; i < sa.length && i < sb.length; i++) {
      if (sa[i] !== sb[i]) return position(node, sa[i]!) - position(node, sb[i]!) || (sa[i]! < sb[i]! ? -1 : 1);
      node = child(node, sa[i]!);
    }
    return sa.length - sb.length;
  });
}
