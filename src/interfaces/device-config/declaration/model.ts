/**
 * What the device models of a declaration (specs/device-config.yaml, `deployDeclaration`): the
 * properties each level's schema lists, and of those the ones the device applies. Everything else a
 * declaration carries is kept as given and reported as a warning. model.test.ts checks these lists
 * against the spec's schemas.
 */

/** A plain JSON object (not an array, not null). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Own properties only: a member named `toString` or `constructor` must not find Object.prototype's. */
export const own = (record: Readonly<Record<string, unknown>>, key: string): unknown =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** The properties of `Declaration` in the spec; every other property of a declaration is a tenant. */
export const DECLARATION_PROPERTIES: ReadonlySet<string> = new Set([
  'class',
  '$schema',
  'schemaVersion',
  'id',
  'label',
  'remark',
  'updateMode',
  'controls',
  'constants',
  'target',
]);
/** The properties of `Tenant`; every other property of a tenant is an application. */
export const TENANT_PROPERTIES: ReadonlySet<string> = new Set([
  'class',
  'label',
  'remark',
  'controls',
  'defaultRouteDomain',
  'enable',
  'optimisticLockKey',
  'useCommonRouteDomainTenant',
  'constants',
  'verifiers',
]);
/** The properties of `Application`; every other property of an application is a member (service, pool, ...). */
export const APPLICATION_PROPERTIES: ReadonlySet<string> = new Set([
  'class',
  'template',
  'label',
  'remark',
  'controls',
  'enable',
  'constants',
  'schemaOverlay',
]);

/** Kept and never warned about, at any level (spec: "`label`/`remark` at any level (kept, not warned)", `controls`). */
const ALWAYS_QUIET = ['class', 'label', 'remark', 'controls'];

/** Properties the device applies (or, for `template`, `loadBalancingMode` and `addressDiscovery`, judges by value). */
export const APPLIED = {
  tenant: new Set(ALWAYS_QUIET),
  application: new Set([...ALWAYS_QUIET, 'template']),
  service: new Set([...ALWAYS_QUIET, 'virtualAddresses', 'pool', 'virtualPort', 'iRules']),
  pool: new Set([...ALWAYS_QUIET, 'loadBalancingMode', 'monitors', 'members']),
  poolMember: new Set([...ALWAYS_QUIET, 'servicePort', 'serverAddresses', 'addressDiscovery', 'enable', 'adminState']),
} as const satisfies Record<string, ReadonlySet<string>>;

export const SERVICE_CLASS = 'Service_HTTP';
export const POOL_CLASS = 'Pool';
export const MONITOR_CLASS = 'Monitor';
/** Run by the services that name them (rules-plan.ts); `Data_Group`s are what their `class match` reads. */
export const IRULE_CLASS = 'iRule';
export const DATA_GROUP_CLASS = 'Data_Group';

/** `virtualPort` when the service does not give one (spec: Service.virtualPort default). */
export const DEFAULT_VIRTUAL_PORT = 80;

/** The device's built-in monitors by name; `{bigip}` names them under /Common with `_` for `-`. */
export const BUILT_IN_MONITORS: ReadonlySet<string> = new Set([
  'http',
  'https',
  'http2',
  'tcp',
  'tcp-half-open',
  'udp',
  'icmp',
  'gateway-icmp',
]);
export const DEVICE_MONITOR_PATHS: ReadonlySet<string> = new Set(
  [...BUILT_IN_MONITORS].map((name) => `/Common/${name.replaceAll('-', '_')}`),
);

/** The one monitor the device runs (the seed's HTTP monitor). */
export const isAppliedMonitor = (reference: unknown): boolean =>
  reference === 'http' || (isRecord(reference) && own(reference, 'bigip') === '/Common/http');

/**
 * Whether a reference names an object of the `Common` tenant (`/Common/Shared/web_pool`) from another
 * tenant: the real extension lets every tenant use what `/Common/Shared` holds. A tenant is planned on
 * its own here, so such a reference is kept and reported, not followed.
 */
export const isCommonReference = (reference: unknown, tenantName: string): reference is string =>
  typeof reference === 'string' && tenantName !== 'Common' && reference.startsWith('/Common/');

/** The applications of a tenant, in declaration order (properties that are not Tenant settings). */
export const applicationsOf = (tenant: Readonly<Record<string, unknown>>): [string, unknown][] =>
  Object.entries(tenant).filter(([key]) => !TENANT_PROPERTIES.has(key));

/** The members (services, pools, ...) of an application, in declaration order. */
export const membersOf = (application: Readonly<Record<string, unknown>>): [string, unknown][] =>
  Object.entries(application).filter(([key]) => !APPLICATION_PROPERTIES.has(key));

/** Only the listed properties of a record (the level's own settings, without its children). */
export const pick = (record: Readonly<Record<string, unknown>>, keys: ReadonlySet<string>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([key]) => keys.has(key)));

/** A value echoed in a message: at most `max` characters. */
export const clip = (text: string, max = 64): string => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

/** A list of messages: at most `max`, then one last entry saying how many more there were. */
export const capList = (items: readonly string[], max = 100): string[] =>
  items.length > max ? [...items.slice(0, max), `... and ${items.length - max} more`] : [...items];
