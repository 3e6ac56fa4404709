// The device's state written as a real device's configuration files, in tmsh syntax: what a
// `device-archive` snapshot holds (snapshot-source.ts). Tenants become partitions, applications
// folders, pools `ltm pool`, services `ltm virtual` (a second address `<name>-1-`, as the
// declarative service names it on a real device), monitors `ltm monitor`, script objects `ltm rule`,
// db variables `sys db`. The snapshots engine reads it back (engine/tmsh/): the same facts.
import { DEFAULT_PORTS, isRecord, MONITOR_DEFAULTS, numberOr, ofClass, reference, strings } from '../../lib/declaration-json.ts';

const BARE_WORD = /^[A-Za-z0-9_./:%@*+=,~-]+$/;
/** Partition names that can be a folder of the archive (and are not `.` or `..`). */
const FOLDER_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$/;

/**
 * A word as tmsh writes it: bare when it can be, else quoted with `\` and `"` escaped.
 *
 * @example word('a b') // '"a b"'
 */
export function word(text: string): string {
  return BARE_WORD.test(text) && !text.startsWith('#') ? text : `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/**
 * Whether a script's text can stand between the braces of an `ltm rule` and be read back as it is: its
 * braces balance as Tcl counts them (a backslash escapes the next character) and never close below zero.
 */
export function scriptFitsBraces(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth < 0) return false;
  }
  return depth === 0;
}

/** `/T/address:port`, or `/T/address.port` for IPv6, as a real device names a member or destination. */
const destination = (partition: string, address: string, port: number) =>
  `/${partition}/${address}${address.includes(':') ? '.' : ':'}${port}`;

export type TmshState = {
  declaration: unknown;
  dbVariables: Readonly<Record<string, string>>;
  scripts: readonly { partition: string; name: string; apiAnonymous: string }[];
  hostname: string;
  machineId: string;
  version: string;
  platform: string;
};
export type TmshFile = { path: string; text: string };

/**
 * The device's configuration files: `config/bigip_base.conf` (partitions, the device record, db
 * variables, folders, host name), `config/bigip.conf` (the Common partition's script objects and any
 * partition whose name cannot be a folder) and `config/partitions/<tenant>/bigip.conf`. Script objects
 * whose braces do not balance cannot be written in tmsh syntax: they are left out and named in `leftOut`.
 *
 * @example tmshConfiguration(state).files.map((f) => f.path) // ['config/bigip_base.conf', 'config/bigip.conf', 'config/partitions/Web_Prod/bigip.conf']
 */
export function tmshConfiguration(state: TmshState): { files: TmshFile[]; leftOut: string[] } {
  const header = `#TMSH-VERSION: ${state.version}\n\n`;
  let adc: unknown = state.declaration;
  if (isRecord(adc) && adc.class === 'AS3') adc = adc.declaration;
  const tenants = isRecord(adc) ? ofClass(adc, (cls) => cls === 'Tenant') : [];

  const base: string[] = [`auth partition Common { }\n`];
  for (const [tenant] of tenants) base.push(`auth partition ${word(tenant)} { }\n`);
  base.push(
    `cm device ${word(`/Common/${state.hostname}`)} {\n    chassis-id ${word(state.machineId)}\n    hostname ${word(state.hostname)}\n    marketing-name ${word(state.platform)}\n    self-device true\n    version ${word(state.version)}\n}\n`,
  );
  for (const [name, value] of Object.entries(state.dbVariables)) base.push(`sys db ${word(name)} {\n    value ${word(value)}\n}\n`);

  const common: string[] = [];
  const partitionFiles = new Map<string, string[]>();
  const taken = new Set<string>();
  const fileOf = (partition: string): string[] => {
    if (partition === 'Common') return common;
    let lines = partitionFiles.get(partition);
    if (lines) return lines;
    if (!FOLDER_NAME.test(partition) || partition === '..' || taken.has(partition.toLowerCase())) return common;
    taken.add(partition.toLowerCase());
    lines = [];
    partitionFiles.set(partition, lines);
    return lines;
  };

  for (const [tenant, tenantBody] of tenants) {
    const out = fileOf(tenant);
    for (const [application, app] of ofClass(tenantBody, (cls) => cls === 'Application')) {
      const folder = `/${tenant}/${application}`;
      base.push(`sys folder ${word(folder)} { }\n`);
      const localPools = new Set(ofClass(app, (cls) => cls === 'Pool').map(([name]) => name));
      const localMonitors = new Set(ofClass(app, (cls) => cls === 'Monitor').map(([name]) => name));
      const resolve = (ref: string, local: ReadonlySet<string>, elsewhere: string) =>
        ref.startsWith('/') ? ref : local.has(ref) ? `${folder}/${ref}` : `${elsewhere}/${ref}`;
      for (const [name, monitor] of ofClass(app, (cls) => cls === 'Monitor')) {
        const type = String(monitor.monitorType ?? '');
        out.push(
          `ltm monitor ${word(type)} ${word(`${folder}/${name}`)} {\n    defaults-from ${word(`/Common/${type}`)}\n    interval ${numberOr(monitor.interval, MONITOR_DEFAULTS.interval)}\n    timeout ${numberOr(monitor.timeout, MONITOR_DEFAULTS.timeout)}\n}\n`,
        );
      }
      for (const [name, pool] of ofClass(app, (cls) => cls === 'Pool')) {
        const groups = Array.isArray(pool.members) ? pool.members.filter(isRecord) : [];
        const members = groups.flatMap((group) =>
          strings(group.serverAddresses).map(
            (address) =>
              `        ${word(destination(tenant, address, numberOr(group.servicePort, 0)))} {\n            address ${word(address)}\n        }\n`,
          ),
        );
        const monitors = (Array.isArray(pool.monitors) ? pool.monitors.map(reference) : []).map((ref) =>
          word(resolve(ref, localMonitors, '/Common')),
        );
        out.push(
          `ltm pool ${word(`${folder}/${name}`)} {\n${members.length > 0 ? `    members {\n${members.join('')}    }\n` : ''}${monitors.length > 0 ? `    monitor ${monitors.join(' and ')}\n` : ''}}\n`,
        );
      }
      for (const [name, service] of ofClass(app, (cls) => cls.startsWith('Service_'))) {
        const cls = String(service.class);
        const tls = cls === 'Service_HTTPS' || service.serverTLS !== undefined;
        const port = numberOr(service.virtualPort, DEFAULT_PORTS[cls] ?? 0);
        const pool = reference(service.pool);
        const profiles = [
          ...(tls ? ['        /Common/clientssl {\n            context clientside\n        }\n'] : []),
          ...(cls === 'Service_HTTP' || cls === 'Service_HTTPS' ? ['        /Common/http { }\n'] : []),
          '        /Common/tcp { }\n',
        ];
        strings(service.virtualAddresses).forEach((address, i) => {
          out.push(
            `ltm virtual ${word(`${folder}/${name}${i === 0 ? '' : `-${i}-`}`)} {\n    destination ${word(destination(tenant, address, port))}\n    ip-protocol tcp\n    metadata {\n        class {\n            value ${word(cls)}\n        }\n    }\n${pool ? `    pool ${word(resolve(pool, localPools, folder))}\n` : ''}    profiles {\n${profiles.join('')}    }\n    source 0.0.0.0/0\n}\n`,
          );
        });
      }
    }
  }
  base.push(`sys global-settings {\n    hostname ${word(state.hostname)}\n}\n`);

  const leftOut: string[] = [];
  for (const script of state.scripts) {
    const path = `/${script.partition}/${script.name}`;
    if (!scriptFitsBraces(script.apiAnonymous)) {
      leftOut.push(path);
      continue;
    }
    // A partition that is no tenant gets no file of its own (a partition's file makes it a tenant when read back).
    (partitionFiles.get(script.partition) ?? common).push(`ltm rule ${word(path)} {\n${script.apiAnonymous}\n}\n`);
  }
  const files: TmshFile[] = [
    { path: 'config/bigip_base.conf', text: header + base.join('') },
    { path: 'config/bigip.conf', text: header + common.join('') },
    ...[...partitionFiles].map(([partition, lines]) => ({
      path: `config/partitions/${partition}/bigip.conf`,
      text: header + lines.join(''),
    })),
  ];
  return { files, leftOut };
}
