// `class`: data groups of the declaration. `class match item op group` compares the item with each record's
// key: `equals` (integer groups compare numbers, address groups test membership of an address in a
// network such as 10.0.0.0/8), `starts_with`, `ends_with`, `contains` (the item starts with, ends with or
// contains a key). When several keys match, `equals` takes the first and the others the longest key.
import { flag } from './command-kit.ts';
import type { CommandSpec, Run } from './model.ts';
import { TclError } from './signals.ts';
import type { DataGroup } from './types.ts';
import { parseNumber } from './values.ts';

const OPERATORS = ['equals', 'starts_with', 'ends_with', 'contains'] as const;
type Operator = (typeof OPERATORS)[number];
const RESULTS = ['-value', '-name'] as const;

function ipv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

/** Whether an address is the key, or inside the key's network. */
function addressIn(item: string, key: string): boolean {
  const address = item.replace(/%\d+$/, '');
  const [network, bits] = key.replace(/%\d+(?=\/|$)/, '').split('/') as [string, string?];
  const a = ipv4(address);
  const n = ipv4(network);
  if (a === undefined || n === undefined) return address.toLowerCase() === network.toLowerCase() && bits === undefined;
  const length = bits === undefined ? 32 : Number(bits);
  if (!Number.isInteger(length) || length < 0 || length > 32) return false;
  const size = 2 ** (32 - length);
  return Math.floor(a / size) === Math.floor(n / size);
}

function keyMatches(group: DataGroup, item: string, key: string, op: Operator): boolean {
  if (op === 'starts_with') return item.startsWith(key);
  if (op === 'ends_with') return item.endsWith(key);
  if (op === 'contains') return item.includes(key);
  if (group.type === 'address') return addressIn(item, key);
  if (group.type === 'integer') {
    const [x, y] = [parseNumber(item), parseNumber(key)];
    // biome-ignore lint/suspicious/noDoubleEquals: integer keys compare by value, whatever their form.
    if (x !== undefined && y !== undefined) return x == y;
  }
  return item === key;
}

function find(run: Run, item: string, op: Operator, name: string): { key: string; value: string } | undefined {
  const group = run.environment.dataGroups.get(name);
  if (!group) throw new TclError(`no such data group "${name.slice(0, 80)}"`);
  run.step(1 + (group.records.length >> 4));
  let best: { key: string; value: string } | undefined;
  for (const record of group.records) {
    if (!keyMatches(group, item, record.key, op)) continue;
    if (op === 'equals') return record;
    if (!best || record.key.length > best.key.length) best = record;
  }
  return best;
}

function matchArgs(args: readonly (string | undefined)[]): { result: string | undefined; rest: number } | string {
  let i = 1;
  let result: string | undefined;
  if (args[i] !== undefined && (RESULTS as readonly string[]).includes(args[i]!)) result = args[i++];
  if (args[i] === '--') i++;
  if (args.length - i !== 3) return 'wrong # args: should be "class match ?-value|-name? ?--? item operator group"';
  const op = args[i + 1];
  if (op !== undefined && !(OPERATORS as readonly string[]).includes(op)) {
    return `unknown operator "${op}" for "class match" (supported: ${OPERATORS.join(', ')})`;
  }
  return { result, rest: i };
}

export const CLASS_COMMAND: CommandSpec = {
  name: 'class',
  summary:
    'Looks items up in the declaration’s data groups: `match` (1/0, or the key or value with -name/-value), `lookup` (the value of the equal key), `exists`.',
  forms: [
    'class match ?-value|-name? ?--? item equals|starts_with|ends_with|contains group',
    'class lookup item group',
    'class exists group',
  ],
  shape(args) {
    if (args[0] === 'match') {
      const form = matchArgs(args);
      return typeof form === 'string' ? form : [];
    }
    if (args[0] === 'lookup') return args.length === 3 ? [] : 'wrong # args: should be "class lookup item group"';
    if (args[0] === 'exists') return args.length === 2 ? [] : 'wrong # args: should be "class exists group"';
    return args[0] === undefined
      ? 'the subcommand of "class" must be written out'
      : `unknown subcommand "class ${args[0]}" (supported: match, lookup, exists)`;
  },
  run(run, args) {
    const problem = this.shape!(args);
    if (typeof problem === 'string') throw new TclError(problem);
    if (args[0] === 'exists') return flag(run.environment.dataGroups.has(args[1]!));
    if (args[0] === 'lookup') return find(run, args[1]!, 'equals', args[2]!)?.value ?? '';
    const form = matchArgs(args) as { result: string | undefined; rest: number };
    const [item, op, group] = args.slice(form.rest) as [string, Operator, string];
    const record = find(run, item, op, group);
    if (form.result === '-value') return record?.value ?? '';
    if (form.result === '-name') return record?.key ?? '';
    return flag(record !== undefined);
  },
};
