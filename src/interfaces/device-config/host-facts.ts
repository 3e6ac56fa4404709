import { readFile, realpath, statfs } from 'node:fs/promises';
import { freemem, loadavg, totalmem, uptime } from 'node:os';
import { dirname, resolve, sep } from 'node:path';
import type { DiskUsage, HostFacts, MemoryUsage } from './host-commands.ts';

/**
 * What the host this device runs on says of itself, for the snapshot's command outputs: its uptime
 * and load, the file system holding `dataDir` (or its nearest existing parent: nothing is created),
 * and memory from `/proc/meminfo` where there is one (what `free` reads), else the runtime's totals.
 */
export async function readHostFacts(dataDir: string): Promise<HostFacts> {
  const [disk, memory] = await Promise.all([diskOf(dataDir), memoryOf()]);
  const [one = 0, five = 0, fifteen = 0] = loadavg();
  return { uptimeSeconds: uptime(), loadAverage: [one, five, fifteen], disk, memory };
}

async function diskOf(dataDir: string): Promise<DiskUsage | undefined> {
  const dir = await existingAncestor(resolve(dataDir));
  if (!dir) return undefined;
  const stats = await statfs(dir).catch(() => undefined);
  if (!stats) return undefined;
  const mount = await mountOf(dir);
  return {
    filesystem: mount?.device ?? '-',
    mountedOn: mount?.point ?? dir,
    totalBytes: stats.blocks * stats.bsize,
    freeBytes: stats.bfree * stats.bsize,
    availableBytes: stats.bavail * stats.bsize,
  };
}

async function existingAncestor(dir: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    const real = await realpath(at).catch(() => undefined);
    if (real) return real;
    if (dirname(at) === at) return undefined;
  }
}

/** The mount (Linux `/proc/self/mounts`) whose point is the longest prefix of `dir`; undefined elsewhere. */
async function mountOf(dir: string): Promise<{ device: string; point: string } | undefined> {
  const table = await readFile('/proc/self/mounts', 'utf8').catch(() => '');
  // Spaces and tabs in a field are written as octal escapes (`\040`).
  const unescapeOctal = (field: string) =>
    field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
  let best: { device: string; point: string } | undefined;
  for (const line of table.split('\n')) {
    const [device, point] = line.split(' ').map(unescapeOctal);
    if (!device || !point) continue;
    const holds = point === '/' || dir === point || dir.startsWith(point.endsWith(sep) ? point : `${point}${sep}`);
    if (holds && (!best || point.length >= best.point.length)) best = { device, point };
  }
  return best;
}

async function memoryOf(): Promise<MemoryUsage> {
  const meminfo = await readFile('/proc/meminfo', 'utf8').catch(() => undefined);
  const fields = new Map<string, number>();
  for (const match of (meminfo ?? '').matchAll(/^(\w+(?:\(\w+\))?):\s+(\d+)\s*kB$/gm)) fields.set(match[1]!, Number(match[2]));
  const total = fields.get('MemTotal');
  const free = fields.get('MemFree');
  if (total === undefined || free === undefined) {
    const totalKiB = Math.floor(totalmem() / 1024);
    const freeKiB = Math.floor(freemem() / 1024);
    return { source: 'runtime', totalKiB, freeKiB, sharedKiB: 0, buffCacheKiB: 0, availableKiB: freeKiB };
  }
  const get = (name: string) => fields.get(name) ?? 0;
  const swapTotal = fields.get('SwapTotal');
  return {
    source: 'proc-meminfo',
    totalKiB: total,
    freeKiB: free,
    sharedKiB: get('Shmem'),
    buffCacheKiB: get('Buffers') + get('Cached') + get('SReclaimable'),
    availableKiB: fields.get('MemAvailable') ?? free,
    ...(swapTotal === undefined ? {} : { swap: { totalKiB: swapTotal, freeKiB: get('SwapFree') } }),
  };
}
