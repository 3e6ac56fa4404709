import type { TmshNode, TmshObject } from './parse.ts';

/** A pool member as configured: its name (`/Common/10.0.0.1:80`), address (a node's or the member's own) and port. */
export type PoolMember = { readonly name: string; readonly address: string; readonly port: number };
export type Pool = { readonly path: string; readonly members: PoolMember[]; readonly monitors: string[] };
export type Virtual = {
  readonly path: string;
  /** The destination's address (route domain `%N` kept) and port; '' and 0 when it has none. */
  readonly address: string;
  readonly port: number;
  readonly pool: string;
  readonly profiles: string[];
  readonly protocol: string;
  readonly source: string;
  /** `metadata { class { value Service_HTTP } }`, as Portolan's device writes it; '' otherwise. */
  readonly declaredClass: string;
  /** Its iRules (`rules { /Common/a /Common/b }`), full paths in order. */
  readonly rules: string[];
  /** `ip-forward` or `l2-forward`: a forwarding virtual (it routes packets, it serves no application). */
  readonly forwarding: boolean;
};
export type Monitor = { readonly path: string; readonly type: string; interval?: number; timeout?: number; parent: string };
export type Script = { readonly path: string; readonly text: string; readonly file: string };
export type DeviceIdentity = { hostname?: string; chassisId?: string; platform?: string; version?: string };

/** What the configuration files say, gathered over all of them (README.md, "Device archives"). */
export type DeviceConfig = {
  readonly pools: Map<string, Pool>;
  readonly virtuals: Virtual[];
  /** Node and virtual-address objects: full path to address. */
  readonly nodes: Map<string, string>;
  readonly virtualAddresses: Map<string, string>;
  readonly monitors: Map<string, Monitor>;
  readonly scripts: Script[];
  readonly db: Map<string, string>;
  readonly partitions: Set<string>;
  /** Folders below a partition (`/Tenant/App`): the applications. */
  readonly folders: Set<string>;
  readonly clientSsl: Set<string>;
  readonly device: DeviceIdentity;
  tmshVersion?: string;
};

export const emptyConfig = (): DeviceConfig => ({
  pools: new Map(),
  virtuals: [],
  nodes: new Map(),
  virtualAddresses: new Map(),
  monitors: new Map(),
  scripts: [],
  db: new Map(),
  partitions: new Set(),
  folders: new Set(),
  clientSsl: new Set(),
  device: {},
});

/** The objects gathered into a DeviceConfig: the rest of a file is skipped unbuilt. */
export function isWanted(header: readonly string[]): boolean {
  const [module, kind, third] = header;
  if (module === 'ltm')
    return (
      ['pool', 'virtual', 'node', 'virtual-address', 'monitor', 'rule'].includes(kind ?? '') ||
      (kind === 'profile' && third === 'client-ssl')
    );
  if (module === 'sys') return kind === 'db' || kind === 'global-settings' || kind === 'folder';
  return (module === 'cm' && kind === 'device') || (module === 'auth' && kind === 'partition');
}

/** The first entry of a block whose first word is `key`: its other words and its block. */
export function property(
  block: readonly TmshNode[] | undefined,
  key: string,
): { words: readonly string[]; block?: readonly TmshNode[] } | undefined {
  const node = block?.find((entry) => entry.words[0] === key);
  return node && { words: node.words.slice(1), ...(node.block ? { block: node.block } : {}) };
}
const value = (block: readonly TmshNode[] | undefined, key: string) => property(block, key)?.words[0];
/** Every word of a block, its nested blocks' too (list properties: `{ /Common/a /Common/b }` or one a line). */
const allWords = (block: readonly TmshNode[] | undefined): string[] =>
  (block ?? []).flatMap((node) => [...node.words, ...allWords(node.block)]);

/** A name as a full path: names without a partition are in the file's partition (`/Common` for the main files). */
export const fullPath = (name: string, partition: string) => (name.startsWith('/') ? name : `/${partition}/${name}`);

const SERVICE_PORTS: Readonly<Record<string, number>> = {
  any: 0,
  ftp: 21,
  ssh: 22,
  telnet: 23,
  smtp: 25,
  domain: 53,
  http: 80,
  https: 443,
};
const portOf = (text: string) => (/^\d{1,5}$/.test(text) ? Number(text) : (SERVICE_PORTS[text] ?? 0));

/**
 * Splits `address:port` (`10.0.0.1%2:80`, `node_name:80`) or, for IPv6 (more than one `:`), `address.port`
 * (`2001:db8::1.443`); the partition and folders before the last `/` are dropped.
 *
 * @example splitDestination('/Common/2001:db8::1%3.443') // { address: '2001:db8::1%3', port: 443 }
 */
export function splitDestination(text: string): { address: string; port: number } {
  const last = text.slice(text.lastIndexOf('/') + 1);
  const ipv6 = isIpv6Destination(last);
  const at = ipv6 ? last.lastIndexOf('.') : last.lastIndexOf(':');
  if (at < 0) return { address: last, port: 0 };
  return { address: last.slice(0, at), port: portOf(last.slice(at + 1)) };
}

/** An IPv6 `address.port`: more than one `:`, or the IPv6 wildcard as tmsh writes it (`any6.443`, `any6%2.80`). */
const isIpv6Destination = (last: string) => (last.match(/:/g) ?? []).length > 1 || /^any6(%\d+)?\./.test(last);
const isIp = (text: string) => /^[\d.]+(%\d+)?$/.test(text) || (text.includes(':') && /^[\da-fA-F:.]+(%\d+)?$/.test(text));
/** `any` and `any6` (route domain kept: `any%2`) as the addresses they stand for. */
const anyAddress = (address: string) => {
  const [host = '', domain] = address.split('%', 2);
  const wildcard = host === 'any' ? '0.0.0.0' : host === 'any6' ? '::' : undefined;
  return wildcard === undefined ? address : domain === undefined ? wildcard : `${wildcard}%${domain}`;
};

/**
 * Adds the objects of one configuration file to `config`. `partition` is the file's own
 * (`config/partitions/<name>/bigip.conf`) or Common; `file` names it in findings.
 */
export function addObjects(config: DeviceConfig, objects: readonly TmshObject[], partition: string, file: string): void {
  for (const object of objects) {
    const [module, kind] = object.header;
    const name = object.header.at(-1) ?? '';
    const path = fullPath(name, partition);
    const block = object.block;
    if (module === 'ltm' && kind === 'rule') {
      if (object.raw !== undefined) config.scripts.push({ path, text: object.raw, file });
    } else if (module === 'ltm' && kind === 'pool') config.pools.set(path, poolOf(path, block, partition));
    else if (module === 'ltm' && kind === 'virtual') config.virtuals.push(virtualOf(path, block, partition));
    else if (module === 'ltm' && kind === 'node') {
      const address = value(block, 'address') ?? value(property(block, 'fqdn')?.block, 'name');
      if (address) config.nodes.set(path, address);
    } else if (module === 'ltm' && kind === 'virtual-address') {
      const address = value(block, 'address');
      if (address) config.virtualAddresses.set(path, anyAddress(address));
    } else if (module === 'ltm' && kind === 'monitor' && object.header.length >= 4) {
      const interval = Number(value(block, 'interval'));
      const timeout = Number(value(block, 'timeout'));
      config.monitors.set(path, {
        path,
        type: object.header[2]!,
        ...(Number.isFinite(interval) && value(block, 'interval') ? { interval } : {}),
        ...(Number.isFinite(timeout) && value(block, 'timeout') ? { timeout } : {}),
        parent: fullPath(value(block, 'defaults-from') ?? '', 'Common'),
      });
    } else if (module === 'ltm' && kind === 'profile') config.clientSsl.add(path);
    else if (module === 'sys' && kind === 'db' && object.header.length === 3) {
      const setting = value(block, 'value');
      if (setting !== undefined) config.db.set(name, setting);
    } else if (module === 'sys' && kind === 'global-settings') {
      config.device.hostname ??= value(block, 'hostname');
    } else if (module === 'sys' && kind === 'folder') {
      const parts = name.split('/').filter(Boolean);
      if (parts.length === 2) config.folders.add(`/${parts[0]}/${parts[1]}`);
    } else if (module === 'auth' && kind === 'partition' && object.header.length === 3) config.partitions.add(name);
    else if (module === 'cm' && kind === 'device' && value(block, 'self-device') === 'true') {
      config.device.hostname = value(block, 'hostname') ?? config.device.hostname;
      config.device.chassisId = value(block, 'chassis-id');
      config.device.platform = value(block, 'marketing-name') ?? value(block, 'platform-id');
      config.device.version = value(block, 'version');
    }
    // Partitions and folders holding traffic objects are tenants and applications even where the
    // records of them (auth partition, sys folder) are missing; a script object makes none.
    const parts = path.split('/').filter(Boolean);
    const traffic = module === 'ltm' && kind !== 'rule';
    if (traffic && parts.length >= 1) config.partitions.add(parts[0]!);
    if (traffic && parts.length >= 3) config.folders.add(`/${parts[0]}/${parts[1]}`);
  }
}

function poolOf(path: string, block: readonly TmshNode[] | undefined, partition: string): Pool {
  const members = (property(block, 'members')?.block ?? []).flatMap((node): PoolMember[] =>
    node.words.map((name, i) => {
      // Several members on one line (`{ /Common/a:80 { } /Common/b:80 { } }`): the block belongs to the last.
      const own = i === node.words.length - 1 ? node.block : undefined;
      const split = splitDestination(name);
      const address = value(own, 'address') ?? value(property(own, 'fqdn')?.block, 'name') ?? '';
      return { name: fullPath(name, partition), address, port: split.port };
    }),
  );
  const monitor = property(block, 'monitor');
  const monitors = [...(monitor?.words ?? []), ...allWords(monitor?.block)].filter(
    (word) => word !== 'and' && word !== 'min' && word !== 'of' && word !== 'none' && !/^\d+$/.test(word),
  );
  return { path, members, monitors: monitors.map((m) => fullPath(m, 'Common')) };
}

function virtualOf(path: string, block: readonly TmshNode[] | undefined, partition: string): Virtual {
  const destination = value(block, 'destination');
  const { address, port } = destination ? splitDestination(destination) : { address: '', port: 0 };
  const pool = value(block, 'pool');
  const metadata = property(property(block, 'metadata')?.block, 'class');
  return {
    path,
    address: destination ? anyAddress(address) : '',
    port,
    pool: pool && pool !== 'none' ? fullPath(pool, partition) : '',
    profiles: (property(block, 'profiles')?.block ?? []).flatMap((node) => node.words.map((word) => fullPath(word, 'Common'))),
    protocol: value(block, 'ip-protocol') ?? 'tcp',
    source: value(block, 'source') ?? '0.0.0.0/0',
    declaredClass: value(metadata?.block, 'value') ?? '',
    rules: allWords(property(block, 'rules')?.block).map((rule) => fullPath(rule, partition)),
    forwarding: (block ?? []).some((entry) => entry.words[0] === 'ip-forward' || entry.words[0] === 'l2-forward'),
  };
}

/** Member and virtual addresses named after a node or virtual-address object, resolved to the object's address. */
export function resolveAddresses(config: DeviceConfig): void {
  for (const pool of config.pools.values()) {
    pool.members.forEach((member, i) => {
      if (member.address !== '') return;
      const node = member.name.slice(0, member.name.length - splitTail(member.name));
      const own = splitDestination(member.name).address;
      pool.members[i] = { ...member, address: config.nodes.get(node) ?? (isIp(own) ? own : '') };
    });
  }
  config.virtuals.forEach((virtual, i) => {
    if (virtual.address === '' || isIp(virtual.address)) return;
    const partition = virtual.path.split('/')[1] ?? 'Common';
    const named =
      config.virtualAddresses.get(fullPath(virtual.address, partition)) ?? config.virtualAddresses.get(`/Common/${virtual.address}`);
    if (named) config.virtuals[i] = { ...virtual, address: named };
  });
}

/** Length of a member name's `:port` (or `.port` for IPv6) tail. */
function splitTail(name: string): number {
  const last = name.slice(name.lastIndexOf('/') + 1);
  const at = isIpv6Destination(last) ? last.lastIndexOf('.') : last.lastIndexOf(':');
  return at < 0 ? 0 : last.length - at;
}
