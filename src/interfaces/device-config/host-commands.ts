// The command outputs of a device snapshot (`commands/*.txt`), written as the commands print them so
// the diagnostics engine's rules read them like a real device's: `uptime`, `df -P` and `free`. Pure:
// the numbers come from host-facts.ts.

/** The file system holding a directory, in bytes (what `df -P <dir>` reports). */
export type DiskUsage = { filesystem: string; mountedOn: string; totalBytes: number; freeBytes: number; availableBytes: number };

/** Memory in KiB, as `free` reports it; `swap` only when the host says (Linux `/proc/meminfo`). */
export type MemoryUsage = {
  /** `runtime`: no /proc/meminfo; only the total and free memory are known (shared and buff/cache are 0). */
  source: 'proc-meminfo' | 'runtime';
  totalKiB: number;
  freeKiB: number;
  sharedKiB: number;
  buffCacheKiB: number;
  availableKiB: number;
  swap?: { totalKiB: number; freeKiB: number };
};

export type HostFacts = {
  uptimeSeconds: number;
  loadAverage: readonly [number, number, number];
  disk: DiskUsage | undefined;
  memory: MemoryUsage;
};

const two = (n: number) => String(n).padStart(2, '0');

/**
 * `uptime` as procps prints it, at `now` (UTC), without the user count (the device cannot know it).
 *
 * @example uptimeText(new Date('2026-11-02T09:30:00Z'), 3_640_320, [0.2, 0.31, 0.29])
 * // ' 09:30:00 up 42 days,  3:12,  load average: 0.20, 0.31, 0.29\n'
 */
export function uptimeText(now: Date, uptimeSeconds: number, load: readonly [number, number, number]): string {
  const minutesUp = Math.floor(uptimeSeconds / 60);
  const days = Math.floor(minutesUp / 1440);
  const hours = Math.floor((minutesUp % 1440) / 60);
  const minutes = minutesUp % 60;
  const clock = `${two(now.getUTCHours())}:${two(now.getUTCMinutes())}:${two(now.getUTCSeconds())}`;
  const dayPart = days > 0 ? `${days} day${days === 1 ? '' : 's'}, ` : '';
  const timePart = hours > 0 ? `${String(hours).padStart(2)}:${two(minutes)}, ` : `${minutes} min, `;
  return ` ${clock} up ${dayPart}${timePart} load average: ${load.map((l) => l.toFixed(2)).join(', ')}\n`;
}

/** `df -P`: 1024-byte blocks; capacity is used / (used + available), rounded up, as df computes it. */
export function dfText(disk: DiskUsage | undefined): string {
  const header = 'Filesystem     1024-blocks      Used Available Capacity Mounted on\n';
  if (!disk) return header;
  const kib = (bytes: number) => Math.floor(bytes / 1024);
  const used = kib(disk.totalBytes - disk.freeBytes);
  const available = kib(disk.availableBytes);
  const capacity = used + available === 0 ? 0 : Math.ceil((used * 100) / (used + available));
  const columns = [
    String(kib(disk.totalBytes)).padStart(11),
    String(used).padStart(9),
    String(available).padStart(9),
    `${capacity}%`.padStart(8),
  ];
  return `${header}${disk.filesystem.padEnd(14)} ${columns.join(' ')} ${disk.mountedOn}\n`;
}

/** `free` (procps-ng, KiB): used is total minus available. */
export function freeText(memory: MemoryUsage): string {
  const row = (label: string, values: readonly number[]) =>
    `${label.padEnd(7)}${values.map((v) => String(Math.max(0, Math.round(v))).padStart(12)).join('')}\n`;
  const { totalKiB, freeKiB, sharedKiB, buffCacheKiB, availableKiB, swap } = memory;
  return (
    `${''.padEnd(7)}${['total', 'used', 'free', 'shared', 'buff/cache', 'available'].map((h) => h.padStart(12)).join('')}\n` +
    row('Mem:', [totalKiB, totalKiB - availableKiB, freeKiB, sharedKiB, buffCacheKiB, availableKiB]) +
    (swap ? row('Swap:', [swap.totalKiB, swap.totalKiB - swap.freeKiB, swap.freeKiB]) : '')
  );
}
