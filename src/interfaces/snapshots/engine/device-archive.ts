import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReadLimits, SnapshotContent } from './content.ts';
import { DEVICE_ARCHIVE_FORMAT, VERSION_FORM, type Manifest } from './manifest.ts';
import { listFiles, readSelected } from './read-files.ts';
import { readHead } from './read-head.ts';
import { configFacts } from './tmsh/config-facts.ts';
import { addObjects, emptyConfig, isWanted, resolveAddresses, type DeviceConfig } from './tmsh/config-model.ts';
import { parseTmsh } from './tmsh/parse.ts';

/** Bytes of configuration read at most: per file, and over all the configuration files of one archive. */
export const DEFAULT_CONFIG_LIMITS = Object.freeze({ maxConfigFileBytes: 32 * 1024 * 1024, maxConfigBytes: 64 * 1024 * 1024 });
const MAX_VERSION_BYTES = 64 * 1024;
const MAX_NOTES = 50;
const CONFIG_NAMES = ['bigip_base.conf', 'bigip.conf', 'bigip_script.conf'];
const PARTITION_CONFIG = /^config\/partitions\/([^/]+)\/(bigip_base|bigip|bigip_script)\.conf$/;
/** Where a db variable and a script object are shown to the rules, as in a Portolan snapshot (README.md, "Device archives"). */
export const DB_VARIABLES_FILE = 'config/db-variables.json';

/** The configuration files of a device archive in reading order (main files first, then each partition's), relative to its root. */
export function configFiles(paths: readonly string[]): { path: string; partition: string }[] {
  const main = CONFIG_NAMES.map((name) => `config/${name}`).filter((path) => paths.includes(path));
  const partitions = paths.filter((path) => PARTITION_CONFIG.test(path)).sort();
  return [
    ...main.map((path) => ({ path, partition: 'Common' })),
    ...partitions.map((path) => ({ path, partition: PARTITION_CONFIG.exec(path)![1]! })),
  ];
}

type Read = { config: DeviceConfig; complete: boolean; notes: string[]; versionFile?: string; tmshVersion?: string };

/** Reads and parses the configuration files under `base` within the budgets; what was left out goes to `notes`. */
async function readConfiguration(
  base: string,
  paths: readonly string[],
  limits: typeof DEFAULT_CONFIG_LIMITS,
  only?: string,
): Promise<Read> {
  const read: Read = { config: emptyConfig(), complete: true, notes: [] };
  let budget = limits.maxConfigBytes;
  for (const { path, partition } of configFiles(paths)) {
    if (only !== undefined && path !== only) continue;
    if (partition !== 'Common') read.config.partitions.add(partition);
    const size = (await lstat(join(base, path))).size;
    const allowed = Math.min(limits.maxConfigFileBytes, budget);
    if (allowed <= 0) {
      read.notes.push(`${path} was not read: the configuration read budget (${limits.maxConfigBytes} bytes) was spent`);
      read.complete = false;
      continue;
    }
    const text = (await readHead(join(base, path), allowed)).toString('utf8');
    budget -= Math.min(size, allowed);
    if (size > allowed) {
      read.notes.push(`${path} is ${size} bytes: only its first ${allowed} bytes were read`);
      read.complete = false;
    }
    const parsed = parseTmsh(text, isWanted);
    if (!parsed.complete) read.complete = false;
    read.notes.push(...parsed.problems.map((problem) => `${path}: ${problem}`));
    read.tmshVersion ??= parsed.tmshVersion;
    addObjects(read.config, parsed.objects, partition, path);
  }
  resolveAddresses(read.config);
  return read;
}

/** `Key: value` lines of the device's VERSION file (`Product: BIG-IP`, `Version: 15.1.8.2`). */
async function versionFile(base: string, paths: readonly string[]): Promise<Record<string, string> | undefined> {
  if (!paths.includes('VERSION')) return undefined;
  const fields: Record<string, string> = {};
  for (const line of (await readHead(join(base, 'VERSION'), MAX_VERSION_BYTES)).toString('utf8').split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) fields[line.slice(0, at).trim()] ??= line.slice(at + 1).trim();
  }
  return fields;
}

const PRINTABLE = /^[\x20-\x7e]{1,64}$/;
const HOSTNAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;
const field = (value: string | undefined, form: RegExp) => (value !== undefined && form.test(value) ? value : '');

/** The manifest fields of a device archive, from VERSION and the device's own records; notes say where the version came from when VERSION does not. */
function identity(read: Read, version: Record<string, string> | undefined): { manifest: Manifest; notes: string[] } {
  const { device } = read.config;
  const notes: string[] = [];
  const sources: [string | undefined, string][] = [
    [version?.Version, ''],
    [device.version, 'the device record (cm device) of the configuration'],
    [read.tmshVersion, 'the #TMSH-VERSION line of the configuration'],
  ];
  const found = sources.find(([value]) => value !== undefined && VERSION_FORM.test(value));
  if (version === undefined)
    notes.push(
      found
        ? `VERSION is missing: the software version ${found[0]} was taken from ${found[1]}`
        : 'VERSION is missing and no configuration file names the software version: the version rules did not run',
    );
  else if (found?.[1]) notes.push(`VERSION names no software version: ${found[0]} was taken from ${found[1]}`);
  const manifest: Manifest = {
    format: DEVICE_ARCHIVE_FORMAT,
    hostname: field(device.hostname, HOSTNAME),
    chassisSerial: field(device.chassisId, PRINTABLE),
    platform: field(device.platform ?? version?.Product, PRINTABLE),
    version: found?.[0] ?? '',
    generatedAt: '',
  };
  return { manifest, notes };
}

/**
 * What a device archive says of the device, cheaply (VERSION and `config/bigip_base.conf` only): the
 * manifest an extraction answers. readDeviceArchive reads the whole configuration.
 *
 * @example (await deviceManifest(dir, '')).version // '15.1.8.2'
 */
export async function deviceManifest(dir: string, root: string): Promise<Manifest> {
  const base = join(dir, root);
  const paths = await listFiles(base);
  const read = await readConfiguration(base, paths, DEFAULT_CONFIG_LIMITS, 'config/bigip_base.conf');
  return identity(read, await versionFile(base, paths)).manifest;
}

/**
 * Reads an unpacked device archive (a UCS or a qkview) under `dir`/`root` as the evaluator sees a
 * snapshot: paths relative to `root`; the collections read from its configuration in tmsh syntax; its
 * `sys db` values as `config/db-variables.json` and each `ltm rule` as `config/rules/<partition>~<name>.tcl`
 * (labelled with the object and its file), so the rules written for Portolan's snapshots apply; the text
 * of every other file the rule set reads (`var/log/*`), within the read limits. Never fails: what
 * could not be read is in `notes`.
 *
 * @example const content = await readDeviceArchive(dir, '', ruleSet.reads);
 */
export async function readDeviceArchive(
  dir: string,
  root: string,
  reads: (path: string) => boolean,
  limits: ReadLimits & { maxConfigFileBytes?: number; maxConfigBytes?: number },
): Promise<SnapshotContent> {
  const base = join(dir, root);
  const files = await listFiles(base);
  const read = await readConfiguration(base, files, { ...DEFAULT_CONFIG_LIMITS, ...definedOnly(limits) });
  const { manifest, notes } = identity(read, await versionFile(base, files));
  const { config } = read;

  const derived = new Map<string, string>([[DB_VARIABLES_FILE, `${JSON.stringify(Object.fromEntries(config.db), null, 2)}\n`]]);
  const labels = new Map<string, string>([[DB_VARIABLES_FILE, `${DB_VARIABLES_FILE} (the sys db values of the configuration)`]]);
  for (const script of config.scripts) {
    const [partition = '', ...name] = script.path.split('/').filter(Boolean);
    let path = `config/rules/${partition}~${name.join('~')}.tcl`;
    for (let i = 2; derived.has(path); i++) path = `config/rules/${partition}~${name.join('~')}~${i}.tcl`;
    derived.set(path, script.text);
    labels.set(path, `ltm rule ${script.path} (${script.file})`);
  }
  const own = files.filter((path) => !derived.has(path));
  const { text, unread } = await readSelected(base, own.filter(reads), limits.maxFileBytes, limits.maxTotalBytes);
  for (const [path, body] of derived) text.set(path, body);
  const allNotes = [
    ...notes,
    ...read.notes,
    ...unread.map((path) => `${path} was not read: the read budget (${limits.maxTotalBytes} bytes) was spent`),
  ];
  return {
    manifest,
    paths: [...own, ...derived.keys()].sort(),
    text,
    unread,
    collections: configFacts(config, read.complete),
    labels,
    notes:
      allNotes.length > MAX_NOTES ? [...allNotes.slice(0, MAX_NOTES - 1), `... and ${allNotes.length - MAX_NOTES + 1} more`] : allNotes,
  };
}

const definedOnly = (limits: { maxConfigFileBytes?: number; maxConfigBytes?: number }) =>
  Object.fromEntries(
    Object.entries({ maxConfigFileBytes: limits.maxConfigFileBytes, maxConfigBytes: limits.maxConfigBytes }).filter(
      ([, v]) => v !== undefined,
    ),
  );
