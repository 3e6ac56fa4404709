import type { Clock } from '../lib/clock.ts';
import type { CoreConfig, Setting, SettingsValues } from '../lib/config.ts';
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
  rateLimitStatus(
    authorization: string | string[] | undefined,
  ): Promise<
    | { kind: 'status'; status: { 'x-rate-limit-limit': number; 'x-rate-limit-remaining': number; 'x-rate-limit-reset': number } }
    | { kind: 'unavailable'; reason: string }
  >;
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
 * modules, and adding an interface touches its folder and that list. Written with `defineModule`, its
 * context is typed by its own settings (a misspelt setting is a type error) and its handlers by its spec.
 *
 * @example
 * export const mappingModule = defineModule({
 *   name: 'mapping',
 *   migrations: MAPPING_MIGRATIONS,
 *   errorShape: () => renderMappingError,
 *   create: (context) => createMappingHandlers({ ... }) satisfies OperationHandlers<typeof Sdk>,
 * });
 */
export type InterfaceModule<TConfig = CoreConfig> = {
  /** The spec's name (`specs/<name>.yaml` unless `specFile` says otherwise). */
  name: string;
  /** Absolute path of the OpenAPI document (fixtures and embedders; default: specs/<name>.yaml). */
  specFile?: string;
  /** The module's own settings (declared beside it; they join `--help`, the README and the config type). */
  settings?: readonly Setting[];
  /** Settings declared elsewhere that this module reads (typed into its context; a test checks that some module or the core declares them). */
  reads?: readonly Setting[];
  /** Schema changes, each with a version unique across modules (checked as a set at start). */
  migrations?: readonly Migration[];
  /**
   * Operations of the spec deliberately left without a handler: they answer 501 in the interface's error
   * shape (after security). Typed by `OperationHandlers<typeof Sdk, ...>`; a test compares both with the spec.
   */
  notImplemented?: readonly string[];
  /** The interface's error wire shape. */
  errorShape(clock: Clock): ErrorRenderer;
  /** One authenticator per security scheme of the spec, run before anything is parsed. */
  authenticators?(context: ModuleContext<TConfig>): Authenticators;
  /** Dependency checks this module adds to some roles' /health. */
  healthChecks?(context: ModuleContext<TConfig>): Partial<Record<RoleName, readonly HealthCheck[]>>;
  /** The interface's own answer to a path no operation serves (the device: 400 under /mgmt/shared/appsvcs). */
  unrouted?(path: string): HandlerResponse | undefined;
  /** The handlers, keyed by operationId (`satisfies OperationHandlers<typeof Sdk>`). */
  create(context: ModuleContext<TConfig>): HandlerMap;
};

/** The configuration a module sees: the core settings, its own, and those it declares it reads. */
export type ModuleConfig<S extends readonly Setting[], R extends readonly Setting[] = readonly []> = CoreConfig &
  SettingsValues<S> &
  SettingsValues<R>;

/**
 * Declares a module: its context is typed by `settings` (and `reads`), so reading a setting it did not
 * declare does not compile. The result joins the module list like any other.
 */
export function defineModule<const S extends readonly Setting[] = readonly [], const R extends readonly Setting[] = readonly []>(
  module: Omit<InterfaceModule<ModuleConfig<S, R>>, 'settings' | 'reads'> & { settings?: S; reads?: R },
): InterfaceModule {
  return module as InterfaceModule;
}
