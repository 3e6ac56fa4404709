import { ConfigError } from '../../lib/config.ts';

/** A device the management system deploys to: its host name (what a `targetList` names), where and as whom. */
export type ManagedDevice = { hostname: string; url: string; username: string; password: string | undefined };

export type DeviceInventory = {
  /** The devices, in the order configured (the local device's URL is known once its role listens). */
  list(): readonly ManagedDevice[];
  find(hostname: string): ManagedDevice | undefined;
  hostnames(): ReadonlySet<string>;
};

export type InventoryOptions = {
  /** `PORTOLAN_CENTRAL_DEVICES`: comma-separated `hostname=url`, credentials (percent-encoded) in the URL. */
  setting: string;
  /** The administrative account: the credentials of a device whose URL carries none. */
  admin: { username: string; password: string | undefined };
  /** The local device role, the default inventory: its host name and, once it listens, its URL. */
  local: { hostname: string; url: () => string };
};

/**
 * The management system's inventory of target devices (designed: seed B names devices only by host
 * name). Credentials travel in the setting's URLs and are stripped from every URL shown; a malformed
 * entry is a configuration error naming the entry's host name, never its URL (it may hold a password).
 */
export function createDeviceInventory(options: InventoryOptions): DeviceInventory {
  const configured = parseDevices(options.setting, options.admin);
  const list = (): readonly ManagedDevice[] =>
    configured.length > 0 ? configured : [{ hostname: options.local.hostname, url: options.local.url(), ...options.admin }];
  return {
    list,
    find: (hostname) => list().find((device) => device.hostname === hostname),
    hostnames: () => new Set(list().map((device) => device.hostname)),
  };
}

function parseDevices(setting: string, admin: InventoryOptions['admin']): ManagedDevice[] {
  if (setting === '') return [];
  const problems: string[] = [];
  const devices: ManagedDevice[] = [];
  for (const entry of setting.split(',')) {
    const at = entry.indexOf('=');
    const hostname = entry.slice(0, at);
    let url: URL;
    try {
      url = new URL(entry.slice(at + 1));
    } catch {
      problems.push(
        `PORTOLAN_CENTRAL_DEVICES: the URL of '${hostname}' is not a URL (expected hostname=http(s)://[user:password@]host:port)`,
      );
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      problems.push(`PORTOLAN_CENTRAL_DEVICES: the URL of '${hostname}' must be http or https`);
    if (devices.some((d) => d.hostname === hostname)) problems.push(`PORTOLAN_CENTRAL_DEVICES: '${hostname}' is listed twice`);
    const credentials =
      url.username !== '' ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) } : admin;
    url.username = '';
    url.password = '';
    devices.push({ hostname, url: url.href.replace(/\/$/, ''), ...credentials });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return devices;
}
