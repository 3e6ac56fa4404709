// The one list of commands a rule may use. The attach-time check refuses any other name, and the docs'
// list (docs/irules.md, scripts/irules-doc.ts) is generated from SUPPORTED_COMMANDS.
import { CLASS_COMMAND } from './commands-class.ts';
import { CONTROL_COMMANDS } from './commands-control.ts';
import { HTTP_COMMANDS } from './commands-http.ts';
import { LIST_COMMANDS } from './commands-list.ts';
import { RULE_COMMANDS } from './commands-rule.ts';
import { STRING_COMMAND } from './commands-string.ts';
import type { CommandSpec } from './model.ts';
import { TclError } from './signals.ts';
import { RULE_EVENTS } from './types.ts';

const topLevelOnly =
  (name: string): CommandSpec['shape'] =>
  () =>
    `"${name}" may stand only at the top level of a rule, not inside a body`;

// `when` and `priority` are read by the compiler at a rule's top level (compile.ts); they are listed here
// so that the docs show them and so that one inside a body gets a clear refusal.
const TOP_LEVEL: CommandSpec[] = [
  {
    name: 'when',
    summary: `Handles an event (${RULE_EVENTS.join(', ')}); lower priorities run first (default 500, 0 to 1000), ties in the order of the rules and of their text.`,
    forms: ['when EVENT ?priority N? ?timing on|off? {body}'],
    shape: topLevelOnly('when'),
    run: () => {
      throw new TclError('"when" may stand only at the top level of a rule');
    },
  },
  {
    name: 'priority',
    summary: 'At the top level of a rule: the priority of its `when` blocks that give none.',
    forms: ['priority N'],
    shape: topLevelOnly('priority'),
    run: () => {
      throw new TclError('"priority" may stand only at the top level of a rule');
    },
  },
];

const ALL: CommandSpec[] = [
  ...TOP_LEVEL,
  ...CONTROL_COMMANDS,
  STRING_COMMAND,
  ...LIST_COMMANDS,
  ...HTTP_COMMANDS,
  ...RULE_COMMANDS,
  CLASS_COMMAND,
];

/** Every command by name. */
export const COMMANDS: ReadonlyMap<string, CommandSpec> = new Map(ALL.map((command) => [command.name, command]));

/** One supported command, as the docs list it. */
export type SupportedCommand = { name: string; summary: string; forms: readonly string[] };

/**
 * The commands a rule may use, in the order the docs list them.
 *
 * @example SUPPORTED_COMMANDS.find((c) => c.name === 'HTTP::uri')?.forms // ['HTTP::uri', 'HTTP::uri newTarget']
 */
export const SUPPORTED_COMMANDS: readonly SupportedCommand[] = ALL.map(({ name, summary, forms }) => ({ name, summary, forms }));
