import type * as F from '../../../generated/device-config/types.gen.ts';
import { refusal, refuse, type TypedHandler } from '../../server/handler-types.ts';
import type { DeviceConfigStore, RuleRecord } from './config-store.ts';
import { alreadyExists, deviceFailure, fullPath, notFound } from './device-errors.ts';
import { checkScript } from './tcl-script.ts';

import { DEVICE_VERSION as VERSION } from './device-version.ts';
const KIND = 'rule';

const selfLink = (partition: string, name: string) =>
  `https://localhost/mgmt/tm/traffic/rule/~${encodeURIComponent(partition)}~${encodeURIComponent(name)}?ver=${VERSION}`;

const toState = (rule: RuleRecord): F.ScriptObjectState => ({
  kind: 'tm:traffic:rule:rulestate',
  name: rule.name,
  partition: rule.partition,
  fullPath: fullPath(rule.partition, rule.name),
  generation: rule.generation,
  selfLink: selfLink(rule.partition, rule.name),
  apiAnonymous: rule.apiAnonymous,
});

/**
 * The script text must be complete and well-formed the way Tcl reads it (tcl-script.ts): an
 * incomplete text is the seed's `incomplete command` (apiError 26214401), a malformed one the real
 * product's rule error (apiError 3), naming the line but never repeating the text.
 */
function scriptProblem(partition: string, name: string, text: string) {
  const checked = checkScript(text);
  if (checked.ok) return undefined;
  if (checked.kind === 'incomplete') return deviceFailure('incompleteCommand', 'incomplete command');
  return deviceFailure('scriptInvalid', `01070151:3: Rule [${fullPath(partition, name)}] error: line ${checked.line}: ${checked.detail}`);
}

/** Script objects at /mgmt/tm/traffic/rule (seed Endpoints F; reads and delete designed after the real product). */
export function createRuleHandlers(deps: { store: DeviceConfigStore }) {
  const listRules: TypedHandler<F.ListRulesData, F.ListRulesResponses, F.ListRulesErrors> = async () => ({
    status: 200,
    body: {
      kind: 'tm:traffic:rule:rulecollectionstate',
      selfLink: `https://localhost/mgmt/tm/traffic/rule?ver=${VERSION}`,
      items: (await deps.store.listRules()).map(toState),
    },
  });

  const createRule: TypedHandler<F.CreateRuleData, F.CreateRuleResponses, F.CreateRuleErrors> = async ({ body }) => {
    const partition = body.partition ?? 'Common';
    const problem = scriptProblem(partition, body.name, body.apiAnonymous);
    if (problem) return refusal(problem);
    const created = await deps.store.createRule(partition, body.name, body.apiAnonymous);
    if (created === 'exists') return refusal(alreadyExists(KIND, partition, body.name));
    return { status: 200, body: toState(created) };
  };

  const getRule: TypedHandler<F.GetRuleData, F.GetRuleResponses, F.GetRuleErrors> = async ({ params }) => {
    const rule = await deps.store.getRule(params.partition, params.ruleName);
    return rule ? { status: 200, body: toState(rule) } : refusal(notFound(KIND, params.partition, params.ruleName));
  };

  const patchRule: TypedHandler<F.PatchRuleData, F.PatchRuleResponses, F.PatchRuleErrors> = async ({ params, body }) => {
    const { partition, ruleName } = params;
    if (!(await deps.store.getRule(partition, ruleName))) return refusal(notFound(KIND, partition, ruleName));
    const problem = scriptProblem(partition, ruleName, body.apiAnonymous);
    if (problem) return refusal(problem);
    const updated = await deps.store.updateRule(partition, ruleName, body.apiAnonymous);
    return updated ? { status: 200, body: toState(updated) } : refusal(notFound(KIND, partition, ruleName));
  };

  const deleteRule: TypedHandler<F.DeleteRuleData, F.DeleteRuleResponses, F.DeleteRuleErrors> = async ({ params }) => {
    if (!(await deps.store.deleteRule(params.partition, params.ruleName)))
      return refusal(notFound(KIND, params.partition, params.ruleName));
    return { status: 200, body: undefined };
  };

  // The spec declares no success for it: the device never runs a shell through its REST.
  const getBashUtility: TypedHandler<F.GetBashUtilityData, Record<never, never>, F.GetBashUtilityErrors> = () =>
    refuse('forbidden', 'Operation is not allowed on component /util/bash.');

  return { listRules, createRule, getRule, patchRule, deleteRule, getBashUtility };
}
