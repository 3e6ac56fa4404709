import type { Clock } from '../lib/clock.ts';
import type { CoreConfig, Setting } from '../lib/config.ts';
import type { IdGenerator } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import type { RoleName } from '../lib/roles.ts';
import type { Timers } from '../lib/timers.ts';
import type { Database, Migration, PingResult } from '../stores/database.ts';
import type { AccountStore } from '../accounts/account-store.ts';
import type { AdminCredentials } from '../accounts/admin-bootstrap.ts';
import type { BasicAuthenticator } from '../accounts/basic-auth.ts';
import type { HandlerMap, HandlerResponse } from './handler-types.ts';
import type { InterfaceRuntime } from './interface-runtime.ts';
import type { ErrorRenderer } from './role-app.ts';
import type { Authenticators } from './security.ts';

/** One dependency check of /health: answers within `timeoutMs` or counts as down. */
export type HealthCheck = (timeoutMs: number) => Promise<PingResult>;

/** The traffic parts of the gateway role that interfaces read (G's pool, E's limiter status). */
export type TrafficView = {
  poolStatus(): { membersUp: number } & Record<string, unknown>;
  rateLimitStatus(authorization: string | string[] | undefined): Promise<{ kind: 'status'; status: { 'x-rate-limit-limit': number; 'x-rate-limit-remaining': number; 'x-rate-limit-reset': number } } | { kind: 'unavailable'; reason: string }>;
  pingLimiter: HealthCheck;
};

/** What the composition root gives every module's `create`: passed in, never module-level singletons. */
export type ModuleContext<C = CoreConfig> = {
  /** The whole configuration; a module reads its own settings from it (typed by its `create`). */
  config: C;
  clock: Clock;
  logger: Logger;
  ids: IdGenerator;
  database: Database;
  accounts: AccountStore;
  /** The administrative credentials this process knows (the password only when given or generated). */
  admin: AdminCredentials;
  /** Checks basic credentials against the administrative account. */
  adminAuthenticator: BasicAuthenticator;
  /** This module's compiled contract. */
  runtime: InterfaceRuntime;
  /** The URL a role of this process listens on, once it does. */
  roleUrl(role: RoleName): string | undefined;
  /** The gateway's pool and limiter (throws when the gateway does not run in this process). */
  traffic(): TrafficView;
  /** Every check a role's /health runs (the store, plus what modules declare for that role). */
  healthChecks(role: string): { database: HealthCheck; services: readonly HealthCheck[] };
  /** True once shutdown has begun (/health answers 503). */
  isDraining(): boolean;
  /** Where background work takes its timers from (tests: a fake clock). */
  timers: Timers;
  /**
   * Work a module runs when `role` runs in this process: `start` once every role listens (the device's
   * deployed services, resumed tasks), `stop` after the listeners closed and before the store does.
   */
  onRole(role: RoleName, hooks: { start(): Promise<void>; stop(): Promise<void> }): void;
};

/**
 * One interface, everything it brings in one place: the composition root (src/app/modules.ts) lists
 * modules, and adding an interface touches its folder and that list.
 *
 * @example
 * export const mappingModule = {
 *   name: 'mapping',
 *   migrations: MAPPING_MIGRATIONS,
 *   errorShape: () => renderMappingError,
 *   create: (context) => createMappingHandlers({ ... }) satisfies OperationHandlers<typeof Sdk>,
 * } satisfies InterfaceModule;
 */
export type InterfaceModule = {
  /** The spec's name (`specs/<name>.yaml` unless `specFile` says otherwise). */
  name: string;
  /** Absolute path of the OpenAPI document (fixtures and embedders; default: specs/<name>.yaml). */
  specFile?: string;
  /** The module's own settings (declared beside it; they join `--help`, the README and the config type). */
  settings?: readonly Setting[];
  /** Schema changes, each with a version unique across modules (checked as a set at start). */
  migrations?: readonly Migration[];
  /** The interface's error wire shape. */
  errorShape(clock: Clock): ErrorRenderer;
  /** One authenticator per security scheme of the spec, run before anything is parsed. */
  authenticators?(context: ModuleContext<any>): Authenticators;
  /** Dependency checks this module adds to some roles' /health. */
  healthChecks?(context: ModuleContext<any>): Partial<Record<RoleName, readonly HealthCheck[]>>;
  /** The interface's own answer to a path no operation serves (the device: 400 under /mgmt/shared/appsvcs). */
  unrouted?(path: string): HandlerResponse | undefined;
  /** The handlers, keyed by operationId (`satisfies OperationHandlers<typeof Sdk>`). */
  create(context: ModuleContext<any>): HandlerMap;
};
