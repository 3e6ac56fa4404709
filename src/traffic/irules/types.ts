// The contract between the rule interpreter (src/traffic/irules/) and what runs it (the device's data plane,
// src/traffic/, and the declaration's deployer). The interpreter knows nothing of node:http: it reads and
// changes these plain views, and answers what the data plane must do next.

/** The events a rule may handle, in the order a connection meets them. */
export const RULE_EVENTS = ['CLIENT_ACCEPTED', 'HTTP_REQUEST', 'HTTP_RESPONSE'] as const;
export type RuleEvent = (typeof RULE_EVENTS)[number];

/** Header fields in order, names as received; lookups are case-insensitive. Rules change them in place. */
export type HeaderList = Array<[name: string, value: string]>;

/** The client's request as the rule sees and changes it (`HTTP::uri`, `HTTP::header insert`...). */
export type RuleRequest = {
  method: string;
  /** The request target: path and query (`/a/b?x=1`). `HTTP::uri`/`HTTP::path`/`HTTP::query` read and set it. */
  uri: string;
  /** `1.1` or `1.0`. */
  version: string;
  headers: HeaderList;
};

/** The member's answer as the rule sees and changes it in HTTP_RESPONSE. */
export type RuleResponse = { status: number; headers: HeaderList };

/** The connection a rule runs on. */
export type RuleConnection = { clientAddress: string; clientPort: number; localAddress: string; localPort: number };

/** A data group of the declaration (`class match`): its records, keys compared as `type` says. */
export type DataGroup = { type: 'string' | 'integer' | 'address'; records: ReadonlyArray<{ key: string; value: string }> };

/** What a run may touch besides the request: the tenant's pools by name, its data groups, the device's log. */
export type RuleEnvironment = {
  /** Pool names a rule may pick with `pool <name>`: as written in the tenant (`web_pool`, `/T/A/web_pool`). */
  pools: ReadonlySet<string>;
  dataGroups: ReadonlyMap<string, DataGroup>;
  /** `log` (and a run past its budget): one line to the device's log, with the rule's name. */
  log(rule: string, line: string): void;
  /** Milliseconds now (injected: tests use a fake clock). */
  nowMs(): number;
};

/** Per request: at most this many interpreter steps, and this long (default: 10 000 steps, 50 ms). */
export type RuleBudget = { maxSteps: number; maxMs: number };

/**
 * What the data plane does after an event's rules ran:
 * - `continue`: go on (the request or answer as the rules left it), to `pool` when a rule picked one (a pick
 *   holds for the rest of the connection, as on the real device: later events' outcomes carry it too);
 * - `respond`: answer this instead of the member (`HTTP::respond`, `HTTP::redirect` as a 302 with `Location`);
 * - `reject`: reset the client connection; `drop`: close it without an answer;
 * - `error`: the run failed (a Tcl error, past its budget): the client gets 500. The interpreter has already
 *   written `message` to the device's log through `RuleEnvironment.log`, under `rule`.
 * The first answer of an event wins (`respond`, `reject`, `drop`); as on the real device the event's other
 * commands and rules still run, and a second answer is only logged as an error line.
 */
export type RunOutcome =
  | { kind: 'continue'; pool?: string }
  | { kind: 'respond'; status: number; headers: HeaderList; body: string }
  | { kind: 'reject' }
  | { kind: 'drop' }
  | { kind: 'error'; rule: string; message: string };

/**
 * Why a rule cannot be attached: a command the interpreter does not know (422 names it and its line), or text Tcl
 * cannot read. `message` is whole (`rule "r", line 3: unknown command "HTTP::cookie"`); `command` is set when a
 * command is at fault.
 */
export type RuleRefusal = { rule: string; line: number; command?: string; message: string };

/** One connection's run of a service's rules: variables and `event disable` last as long as the connection. */
export type RuleSession = {
  run(
    event: RuleEvent,
    target: { connection: RuleConnection; request?: RuleRequest; response?: RuleResponse },
    budget?: RuleBudget,
  ): RunOutcome;
};

/** A service's rules, compiled once when the declaration is deployed; `session()` per client connection. */
export type CompiledRules = {
  /** Whether any rule handles `event` (the data plane skips what no rule handles). */
  handles(event: RuleEvent): boolean;
  session(environment: RuleEnvironment): RuleSession;
};
