// The rule interpreter: what the declaration's deployer and the data plane use. The contract is types.ts.
export { type CompileResult, compileRules, DEFAULT_PRIORITY, type RuleText } from './compile.ts';
export { DEFAULT_BUDGET, MAX_RUN_BYTES } from './interp.ts';
export { SUPPORTED_COMMANDS, type SupportedCommand } from './registry.ts';
export { checkScript, type ScriptCheck } from './tcl-check.ts';
export type {
  CompiledRules,
  DataGroup,
  HeaderList,
  RuleBudget,
  RuleConnection,
  RuleEnvironment,
  RuleEvent,
  RuleRefusal,
  RuleRequest,
  RuleResponse,
  RuleSession,
  RunOutcome,
} from './types.ts';
export { RULE_EVENTS } from './types.ts';
