// The rule language's commands outside HTTP: pool, the connection's addresses, event, reject, drop, log.
import { arity, reader } from './command-kit.ts';
import type { CommandSpec } from './model.ts';
import { TclError } from './signals.ts';
import { RULE_EVENTS } from './types.ts';

/** The longest line `log` writes (the real device cuts its log lines at 1024 bytes too). */
export const MAX_LOG_LINE = 1024;

const EVENT_WORDS = new Set<string>([...RULE_EVENTS, 'all']);

function eventShape(args: ReadonlyArray<string | undefined>): [] | string {
  const [first, second] = args;
  if (args.length === 1 && (first === 'disable' || first === 'enable' || first === 'name')) return [];
  if (args.length === 2 && first !== undefined && (second === 'disable' || second === 'enable')) {
    return EVENT_WORDS.has(first) ? [] : `unknown event "${first}" for "event" (supported: ${[...EVENT_WORDS].join(', ')})`;
  }
  if (args.length === 2 && first === 'disable' && second === 'all') return [];
  return 'only "event disable", "event enable", "event name", "event <EVENT> disable|enable" and "event disable all" are supported';
}

export const RULE_COMMANDS: CommandSpec[] = [
  {
    name: 'pool',
    summary: 'Sends the request to another pool of the tenant; the choice holds for the rest of the connection.',
    forms: ['pool name'],
    shape: (args) =>
      args.length === 1
        ? []
        : args[1] === 'member'
          ? '"pool <name> member" is not supported: pick a pool by name'
          : 'wrong # args: should be "pool name"',
    run(run, args) {
      arity(args, 1, 1, 'pool name');
      if (!run.environment.pools.has(args[0]!)) throw new TclError(`no such pool "${args[0]!.slice(0, 80)}" in this tenant`);
      run.pickPool(args[0]!);
      return '';
    },
  },
  {
    name: 'IP::client_addr',
    summary: 'The client’s address.',
    forms: ['IP::client_addr'],
    run: reader('IP::client_addr', (run) => run.connection.clientAddress),
  },
  {
    name: 'IP::remote_addr',
    summary: 'The address of the other end: the client’s (not valid in HTTP_RESPONSE, where it would be the member’s).',
    forms: ['IP::remote_addr'],
    run(run, args) {
      arity(args, 0, 0, 'IP::remote_addr');
      if (run.event === 'HTTP_RESPONSE')
        throw new TclError("IP::remote_addr is not valid in HTTP_RESPONSE: the member's address is not given to rules");
      return run.connection.clientAddress;
    },
  },
  {
    name: 'IP::local_addr',
    summary: 'The address the client connected to (the virtual server’s).',
    forms: ['IP::local_addr'],
    run: reader('IP::local_addr', (run) => run.connection.localAddress),
  },
  {
    name: 'TCP::client_port',
    summary: 'The client’s port.',
    forms: ['TCP::client_port'],
    run: reader('TCP::client_port', (run) => String(run.connection.clientPort)),
  },
  {
    name: 'TCP::local_port',
    summary: 'The port the client connected to.',
    forms: ['TCP::local_port'],
    run: reader('TCP::local_port', (run) => String(run.connection.localPort)),
  },
  {
    name: 'event',
    summary:
      'Stops this rule’s handling of the current event (or of the one named, or of all) for the rest of the connection; `enable` undoes it; `event name` is the current event.',
    forms: ['event disable', 'event EVENT disable', 'event disable all', 'event EVENT enable', 'event name'],
    shape: eventShape,
    run(run, args) {
      const problem = eventShape(args);
      if (typeof problem === 'string') throw new TclError(problem);
      if (args[0] === 'name') return run.event;
      if (args[0] === 'enable') return '';
      if (args[0] === 'disable') {
        run.disable(args[1] === 'all' ? 'all' : run.event);
        return '';
      }
      const event = args[0] as (typeof RULE_EVENTS)[number] | 'all';
      if (args[1] === 'disable') run.disable(event);
      else run.enable(event);
      return '';
    },
  },
  {
    name: 'reject',
    summary: 'Resets the client connection; the first answer of an event wins.',
    forms: ['reject'],
    run: reader('reject', (run) => {
      run.answer({ kind: 'reject' });
      return '';
    }),
  },
  {
    name: 'drop',
    summary: 'Closes the client connection without an answer; the first answer of an event wins.',
    forms: ['drop'],
    run: reader('drop', (run) => {
      run.answer({ kind: 'drop' });
      return '';
    }),
  },
  {
    name: 'discard',
    summary: 'The same as `drop`.',
    forms: ['discard'],
    run: reader('discard', (run) => {
      run.answer({ kind: 'drop' });
      return '';
    }),
  },
  {
    name: 'log',
    summary: `Writes a line to the device’s log with the rule’s name (a facility such as \`local0.\` is accepted and ignored; lines are cut at ${MAX_LOG_LINE} characters).`,
    forms: ['log message', 'log facility.level message'],
    run(run, args) {
      arity(args, 1, 2, 'log ?facility? message');
      const message = args.at(-1)!;
      run.log(message.length > MAX_LOG_LINE ? `${message.slice(0, MAX_LOG_LINE)}...` : message);
      return '';
    },
  },
];
