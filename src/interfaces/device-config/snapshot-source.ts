import { Readable } from 'node:stream';
import { Header, Pack, ReadEntry } from 'tar';
import type { Clock } from '../../lib/clock.ts';
import type { TaskRow } from './declaration-store.ts';
import { deploymentLogLines, DEPLOYMENT_LOG_LINES } from './deployment-log.ts';
import { dfText, freeText, uptimeText, type HostFacts } from './host-commands.ts';
import { scriptFileNames } from './script-file-names.ts';
import { redactSecrets } from './secret-redaction.ts';
import { tmshConfiguration } from './tmsh-config.ts';

/** The archive layout the diagnostics engine reads (src/interfaces/snapshots/engine/README.md). */
export const SNAPSHOT_FORMAT = 'portolan-snapshot/1';
export const SNAPSHOT_PLATFORM = 'Portolan Virtual Edition';

export type SnapshotLimits = { maxScripts: number; maxScriptBytes: number };
export const SNAPSHOT_LIMITS: SnapshotLimits = Object.freeze({ maxScripts: 1000, maxScriptBytes: 16 * 1024 * 1024 });

/** Where a snapshot's content comes from: the device's stores and service, and the host it runs on. */
export type SnapshotSources = {
  identity: { hostname: string; machineId: string };
  version: string;
  clock: Clock;
  /** The deployed declaration as `GET /declare` answers it; undefined when nothing is deployed. */
  declaration(): Promise<unknown>;
  dbVariables(): Promise<Readonly<Record<string, string>>>;
  /** Every script object, by partition and name. */
  scripts(): Promise<readonly { partition: string; name: string; apiAnonymous: string }[]>;
  /** The deployment task records the device keeps, newest first. */
  deployTasks(): Promise<readonly TaskRow[]>;
  hostFacts(): Promise<HostFacts>;
};

export type SnapshotFile = { path: string; body: Buffer };
/**
 * How a snapshot is laid out: Portolan's own `portolan-snapshot/1`, or a real device's archive
 * (`device-archive`: VERSION, the configuration in tmsh syntax under config/, logs under var/log/).
 */
export type SnapshotLayout = 'portolan-snapshot' | 'device-archive';
export const SNAPSHOT_LAYOUTS: readonly SnapshotLayout[] = ['portolan-snapshot', 'device-archive'];
export type DeviceSnapshot = { fileName: string; generatedAt: Date; files: readonly SnapshotFile[] };

/** The device's host name as a manifest takes it: letters, digits, dots and hyphens, at most 253, alphanumeric at both ends. */
export function manifestHostname(hostname: string): string {
  const cleaned = hostname
    .replace(/[^A-Za-z0-9.-]/g, '-')
    .slice(0, 253)
    .replace(/^[.-]+|[.-]+$/g, '');
  return cleaned === '' ? 'localhost' : cleaned;
}

const compactUtc = (at: Date) =>
  at
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');

const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);
const text = (lines: readonly string[]) => Buffer.from(lines.map((line) => `${line}\n`).join(''));

/**
 * Reads the device's state once and lays it out as a `portolan-snapshot/1` archive's files: manifest,
 * configuration (declaration with secrets redacted, db variables, script objects within `limits`),
 * logs (deployment results, and this snapshot's own record of what it left out) and command outputs.
 * With `layout` `device-archive`, laid out as a real device's archive instead: VERSION, the configuration
 * in tmsh syntax (tmsh-config.ts: no secret is written, only pools, services, monitors, folders, script
 * objects and db variables), logs under var/log/, and the same command outputs.
 * Nothing is read from the accounts, tokens or OAuth objects: no credential can end up in it.
 *
 * @example
 * const snapshot = await collectDeviceSnapshot(sources);
 * packSnapshot(snapshot).pipe(createWriteStream(snapshot.fileName));
 */
export async function collectDeviceSnapshot(
  sources: SnapshotSources,
  limits: SnapshotLimits = SNAPSHOT_LIMITS,
  layout: SnapshotLayout = 'portolan-snapshot',
): Promise<DeviceSnapshot> {
  const generatedAt = sources.clock.now();
  const hostname = manifestHostname(sources.identity.hostname);
  const [declaration, dbVariables, scripts, tasks, host] = await Promise.all([
    sources.declaration(),
    sources.dbVariables(),
    sources.scripts(),
    sources.deployTasks(),
    sources.hostFacts(),
  ]);
  const logAt = (level: string, message: string) => `${generatedAt.toISOString()} ${hostname} ${level} snapshot: ${message}`;
  const notes: string[] = [];

  const kept: (typeof scripts)[number][] = [];
  let scriptBytes = 0;
  for (const script of scripts) {
    const bytes = Buffer.byteLength(script.apiAnonymous);
    if (kept.length >= limits.maxScripts || scriptBytes + bytes > limits.maxScriptBytes) break;
    kept.push(script);
    scriptBytes += bytes;
  }
  const names = scriptFileNames(kept);
  const ruleFiles = kept.map((script, i) => ({ path: `config/rules/${names[i]}`, body: Buffer.from(script.apiAnonymous) }));
  if (kept.length < scripts.length) {
    const left = scripts.slice(kept.length).map((s) => `/${s.partition}/${s.name}`.replace(/[\u0000-\u001f\u007f]/g, ' '));
    notes.push(
      logAt(
        'warning',
        `config/rules: ${left.length} script objects left out (at most ${limits.maxScripts} files and ${limits.maxScriptBytes} bytes of script text): ${left.slice(0, 10).join(', ')}${left.length > 10 ? ', ...' : ''}`.slice(
          0,
          1024,
        ),
      ),
    );
  }

  const deployments = deploymentLogLines(tasks, hostname);
  if (deployments.dropped > 0)
    notes.push(
      logAt('notice', `logs/deployments.log: the oldest ${deployments.dropped} lines left out (the newest ${DEPLOYMENT_LOG_LINES} kept)`),
    );
  if (!host.disk) notes.push(logAt('warning', "commands/df.txt: the file system of the device's data directory could not be read"));
  if (host.memory.source === 'runtime')
    notes.push(
      logAt('notice', 'commands/memory.txt: no /proc/meminfo; total and free memory from the runtime, shared and buff/cache unknown (0)'),
    );

  const manifest = {
    format: SNAPSHOT_FORMAT,
    hostname,
    chassisSerial: sources.identity.machineId,
    platform: SNAPSHOT_PLATFORM,
    version: sources.version,
    generatedAt: generatedAt.toISOString(),
  };
  const summary = logAt(
    'notice',
    `taken: ${declaration === undefined ? 'no declaration deployed' : 'the deployed declaration'}, ${Object.keys(dbVariables).length} db variables, ${kept.length} script objects, ${deployments.lines.length} deployment log lines`,
  );
  const commands: SnapshotFile[] = [
    { path: 'commands/uptime.txt', body: Buffer.from(uptimeText(generatedAt, host.uptimeSeconds, host.loadAverage)) },
    { path: 'commands/df.txt', body: Buffer.from(dfText(host.disk)) },
    { path: 'commands/memory.txt', body: Buffer.from(freeText(host.memory)) },
  ];
  if (layout === 'device-archive') {
    const config = tmshConfiguration({
      declaration,
      dbVariables,
      scripts: kept,
      hostname,
      machineId: sources.identity.machineId,
      version: sources.version,
      platform: SNAPSHOT_PLATFORM,
    });
    if (config.leftOut.length > 0)
      notes.push(
        logAt(
          'warning',
          `config: ${config.leftOut.length} script objects left out (their braces do not balance, so tmsh syntax cannot hold them): ${config.leftOut
            .slice(0, 10)
            .map((path) => path.replace(/[\u0000-\u001f\u007f]/g, ' '))
            .join(', ')}${config.leftOut.length > 10 ? ', ...' : ''}`.slice(0, 1024),
        ),
      );
    const files: SnapshotFile[] = [
      {
        path: 'VERSION',
        body: text([`Product: ${SNAPSHOT_PLATFORM}`, `Version: ${sources.version}`, `Date: ${generatedAt.toUTCString()}`]),
      },
      ...config.files.map((file) => ({ path: file.path, body: Buffer.from(file.text) })),
      { path: 'var/log/deployments', body: text(deployments.lines) },
      { path: 'var/log/snapshot', body: text([summary, ...notes]) },
      ...commands,
    ];
    return { fileName: `${hostname}-${compactUtc(generatedAt)}.snapshot.tgz`, generatedAt, files };
  }
  const files: SnapshotFile[] = [
    { path: 'manifest.json', body: json(manifest) },
    ...(declaration === undefined ? [] : [{ path: 'config/declarations.json', body: json(redactSecrets(declaration)) }]),
    { path: 'config/db-variables.json', body: json(dbVariables) },
    ...ruleFiles,
    { path: 'logs/deployments.log', body: text(deployments.lines) },
    { path: 'logs/snapshot.log', body: text([summary, ...notes]) },
    ...commands,
  ];
  return { fileName: `${hostname}-${compactUtc(generatedAt)}.snapshot.tgz`, generatedAt, files };
}

/**
 * The snapshot as a gzip'd tar stream, written by the tar library's packer (pax headers for long
 * names, no owners, files 0644 dated `generatedAt`). The files are in memory already, so the stream
 * cannot fail halfway for want of something to read.
 */
export function packSnapshot(snapshot: DeviceSnapshot): Readable {
  const pack = new Pack({ gzip: true, portable: true });
  for (const file of snapshot.files) {
    const entry = new ReadEntry(
      new Header({ path: file.path, type: 'File', size: file.body.length, mode: 0o644, mtime: snapshot.generatedAt }),
    );
    entry.end(file.body);
    pack.add(entry);
  }
  pack.end();
  return Readable.from(pack, { objectMode: false });
}
